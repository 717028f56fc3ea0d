# Third-party libraries, all from Debian packages (tools/bootstrap installs them).
find_package(PkgConfig REQUIRED)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)
pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)

find_path(GLPK_INCLUDE_DIR glpk.h)
find_library(GLPK_LIBRARY glpk)
if(NOT GLPK_INCLUDE_DIR OR NOT GLPK_LIBRARY)
  message(FATAL_ERROR "GLPK not found: run tools/bootstrap (Debian package libglpk-dev)")
endif()
add_library(sfc_glpk INTERFACE)
target_include_directories(sfc_glpk INTERFACE ${GLPK_INCLUDE_DIR})
target_link_libraries(sfc_glpk INTERFACE ${GLPK_LIBRARY})

# CUDA: the backend needs only the header; libcuda is dlopen'ed at run time.
set(SFC_HAVE_CUDA_H OFF)
if(NOT SFC_CUDA STREQUAL "OFF")
  find_path(SFC_CUDA_INCLUDE_DIR cuda.h
            HINTS $ENV{CUDA_PATH}/include $ENV{CUDA_HOME}/include /usr/local/cuda/include
            NO_CMAKE_SYSTEM_PATH)
  if(NOT SFC_CUDA_INCLUDE_DIR)
    find_path(SFC_CUDA_INCLUDE_DIR cuda.h)
  endif()
  if(SFC_CUDA_INCLUDE_DIR)
    set(SFC_HAVE_CUDA_H ON)
  elseif(SFC_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SFC_CUDA=ON but cuda.h was not found (set CUDA_PATH)")
  endif()
endif()
message(STATUS "sfc: CUDA backend ${SFC_HAVE_CUDA_H} (cuda.h: ${SFC_CUDA_INCLUDE_DIR})")
