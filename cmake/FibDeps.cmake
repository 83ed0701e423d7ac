# Third-party dependencies, all from Debian packages. Nothing is downloaded or vendored.
find_package(nlohmann_json 3.10 REQUIRED CONFIG)
find_package(fmt REQUIRED CONFIG)
find_package(spdlog REQUIRED CONFIG)
find_package(CLI11 REQUIRED CONFIG)
find_package(Threads REQUIRED)
if(FIB_BUILD_TESTS)
  find_package(GTest REQUIRED CONFIG)
endif()
