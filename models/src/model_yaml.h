// The models library's YAML files (models.yaml, model manifests), read as every YAML file is
// (gauntlet/base/yaml_reader.h): every problem is a ModelError "file:line: message".
#pragma once

#include <string>
#include <utility>

#include "gauntlet/base/yaml_reader.h"
#include "gauntlet/models/models.h"

namespace gauntlet::model_yaml {

class Reader : public YamlReader<ModelError> {
 public:
  explicit Reader(std::string file) : YamlReader(std::move(file), /*with_column=*/false) {}
};

}  // namespace gauntlet::model_yaml
