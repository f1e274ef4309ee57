# SPDX-License-Identifier: Apache-2.0
# The Conan recipe, the vcpkg port and the CMake check they rely on (bindings/README.md):
#   package.conan_recipe        exactly the recipe's exports_sources copied to an empty directory,
#                               configured, built and packaged there by the recipe's own methods
#                               with its options, then test_package built against the package and
#                               run (conan_recipe.py: Conan itself cannot be installed here)
#   package.vcpkg_port          ports/enact against the tree: manifest, features, options, the
#                               pkg-config modules and the CMake package directory (vcpkg_port.py)
#   package.secp256k1_recovery  the configure step stops, with what to do, for a libsecp256k1
#                               without the recovery module
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME package.conan_recipe
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/conan_recipe.py --source ${PROJECT_SOURCE_DIR}
      --work ${PROJECT_BINARY_DIR}/tests-package/conan-recipe --cmake ${CMAKE_COMMAND})
  set_tests_properties(package.conan_recipe PROPERTIES LABELS package RUN_SERIAL TRUE TIMEOUT 3600
    ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
  add_test(NAME package.vcpkg_port
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/vcpkg_port.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(package.vcpkg_port PROPERTIES LABELS package)
endif()
add_test(NAME package.secp256k1_recovery
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DWORK_DIR=${PROJECT_BINARY_DIR}/tests-package/secp256k1-recovery
    -P ${CMAKE_CURRENT_LIST_DIR}/secp256k1_recovery.cmake)
set_tests_properties(package.secp256k1_recovery PROPERTIES LABELS package)
