// Anchor TU for the shared torch precompiled header (see CMakeLists.txt).
