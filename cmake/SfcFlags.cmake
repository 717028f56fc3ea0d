# sfc_flags: one INTERFACE target every sfc target links, instead of global flags.
add_library(sfc_flags INTERFACE)
target_compile_definitions(sfc_flags INTERFACE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE
                                               SFC_VERSION_STRING="${PROJECT_VERSION}")
target_compile_options(sfc_flags INTERFACE
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith
  -Wformat=2 -Wvla -Wno-unused-parameter -fno-common)
if(SFC_WERROR)
  target_compile_options(sfc_flags INTERFACE -Werror)
endif()

set(_sfc_san "")
if(SFC_ASAN)
  list(APPEND _sfc_san address)
endif()
if(SFC_UBSAN)
  list(APPEND _sfc_san undefined)
endif()
if(_sfc_san)
  list(JOIN _sfc_san "," _sfc_san_list)
  target_compile_options(sfc_flags INTERFACE -fsanitize=${_sfc_san_list} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
  target_link_options(sfc_flags INTERFACE -fsanitize=${_sfc_san_list})
endif()
