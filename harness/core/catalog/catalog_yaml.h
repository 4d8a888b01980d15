// What the catalog's three files share (catalog.cpp: suites and their groups; catalog_models.cpp:
// model groups and model-file suites; expectations.cpp: expectations and tolerances): the reader
// of their YAML files, and the expansion of a suite's model groups.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "gauntlet/base/yaml_reader.h"
#include "gauntlet/core/catalog/catalog.h"

namespace gauntlet::catalog_yaml {

// Catalog files read as every YAML file is (gauntlet/base/yaml_reader.h), with errors as
// CatalogError "file:line:col: message"; booleans read as 1 and 0 (they are scalar arguments).
class Reader : public YamlReader<CatalogError> {
 public:
  using YamlReader::YamlReader;

  std::string scalar(const YAML::Node& n, const char* what) const {
    std::string s = YamlReader::scalar(n, what);
    if (s == "true") return "1";
    if (s == "false") return "0";
    return s;
  }

  std::vector<std::string> list(const YAML::Node& n, const char* what) const {
    std::vector<std::string> out;
    for (const YAML::Node& item : items(n, what)) out.push_back(scalar(item, what));
    return out;
  }
};

// A group of model cases (Note [Model keys]), appended to `out`.
void expand_model_group(const Reader& r, const YAML::Node& g, std::vector<Case>& out);
// A group of model files (`model_files:`) of the suite file `suite_file`, appended to `out`.
void expand_model_file_group(const Reader& r, const YAML::Node& g, const std::string& suite_file,
                             std::vector<Case>& out);

}  // namespace gauntlet::catalog_yaml
