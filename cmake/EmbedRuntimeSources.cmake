# Embeds the CUDA runtime headers of the top-level runtime/ folder into the
# library as C++ string literals.
#
#   fuser_embed_runtime_sources(<target>
#     SOURCE_DIR <dir>          # folder whose *.h / *.cuh files are embedded
#     OUTPUT_DIR <dir>)         # where the generated files are written
#
# Generates at build time
#   <OUTPUT_DIR>/embedded_runtime_sources.cpp
# which defines
#   namespace fuser {
#   const std::vector<std::pair<std::string, std::string>>& embeddedRuntimeSources();
#   }
# returning (file name relative to SOURCE_DIR, file content) pairs sorted by
# name, as declared in csrc/codegen/embedded_runtime.h. The .cpp is added to
# <target>'s sources; no include path is added, so that every other source
# of the library compiles with the same command line in any build folder (a
# compiler cache then reuses the objects, as tools/check_external.sh does).
# Editing, adding or removing a runtime header regenerates the .cpp on the
# next build.

set(_FUSER_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/GenerateEmbeddedRuntime.cmake")

function(fuser_embed_runtime_sources target)
  cmake_parse_arguments(ARG "" "SOURCE_DIR;OUTPUT_DIR" "" ${ARGN})
  if(NOT ARG_SOURCE_DIR OR NOT ARG_OUTPUT_DIR)
    message(FATAL_ERROR "fuser_embed_runtime_sources: SOURCE_DIR and OUTPUT_DIR are required")
  endif()

  # Re-globbed on every build so that a new header triggers a reconfigure.
  file(GLOB_RECURSE _runtime_files CONFIGURE_DEPENDS
    "${ARG_SOURCE_DIR}/*.h" "${ARG_SOURCE_DIR}/*.cuh")
  list(SORT _runtime_files)

  set(_source "${ARG_OUTPUT_DIR}/embedded_runtime_sources.cpp")

  file(MAKE_DIRECTORY "${ARG_OUTPUT_DIR}")

  add_custom_command(
    OUTPUT "${_source}"
    COMMAND "${CMAKE_COMMAND}"
      "-DSOURCE_DIR=${ARG_SOURCE_DIR}"
      "-DOUTPUT=${_source}"
      -P "${_FUSER_EMBED_SCRIPT}"
    DEPENDS ${_runtime_files} "${_FUSER_EMBED_SCRIPT}"
    COMMENT "Embedding runtime headers from ${ARG_SOURCE_DIR}"
    VERBATIM)

  target_sources(${target} PRIVATE "${_source}")
endfunction()
