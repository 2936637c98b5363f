# Script mode (cmake -P), run at build time by fuser_embed_runtime_sources():
#   cmake -DSOURCE_DIR=<runtime dir> -DOUTPUT=<generated .cpp> -P GenerateEmbeddedRuntime.cmake
#
# Every *.h / *.cuh file under SOURCE_DIR becomes one entry of
# fuser::embeddedRuntimeSources(), in sorted order. Contents are emitted as raw
# string literals, split at line boundaries into chunks of at most
# _chunk_limit bytes (some compilers limit the length of one literal).
# The text is embedded byte for byte, except that CR LF line ends become LF
# (file(READ) drops CRs; compilers would do the same inside raw strings).

cmake_minimum_required(VERSION 3.22)

if(NOT SOURCE_DIR OR NOT OUTPUT)
  message(FATAL_ERROR "GenerateEmbeddedRuntime.cmake needs -DSOURCE_DIR=... and -DOUTPUT=...")
endif()

set(_delim "fuser_rt")
set(_chunk_limit 12000)

file(GLOB_RECURSE _files RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/*.h" "${SOURCE_DIR}/*.cuh")
list(SORT _files)

set(_entries "")
foreach(_name IN LISTS _files)
  file(READ "${SOURCE_DIR}/${_name}" _content)
  string(FIND "${_content}" ")${_delim}\"" _clash)
  if(NOT _clash EQUAL -1)
    message(FATAL_ERROR
      "runtime/${_name} contains the sequence ')${_delim}\"', which ends the raw "
      "string literal used to embed it. Rephrase that line.")
  endif()

  set(_chunks "")
  while(NOT _content STREQUAL "")
    string(LENGTH "${_content}" _len)
    if(_len LESS_EQUAL _chunk_limit)
      set(_piece "${_content}")
      set(_content "")
    else()
      string(SUBSTRING "${_content}" 0 ${_chunk_limit} _piece)
      string(FIND "${_piece}" "\n" _nl REVERSE)
      if(_nl GREATER 0)
        math(EXPR _cut "${_nl} + 1")
        string(SUBSTRING "${_content}" 0 ${_cut} _piece)
      else()
        set(_cut ${_chunk_limit})
      endif()
      string(SUBSTRING "${_content}" ${_cut} -1 _content)
    endif()
    string(APPEND _chunks "         R\"${_delim}(${_piece})${_delim}\",\n")
  endwhile()
  string(APPEND _entries "        {\"${_name}\",\n       join({\n${_chunks}       })},\n")
endforeach()

set(_text "// Generated from the runtime/ folder by cmake/GenerateEmbeddedRuntime.cmake.
// Do not edit: edit the files in runtime/ instead.
#include <codegen/embedded_runtime.h>

#include <initializer_list>

namespace fuser {

namespace {

std::string join(std::initializer_list<const char*> chunks) {
  std::string out;
  for (const char* chunk : chunks) {
    out += chunk;
  }
  return out;
}

} // namespace

const std::vector<std::pair<std::string, std::string>>& embeddedRuntimeSources() {
  static const std::vector<std::pair<std::string, std::string>> sources = {
${_entries}  };
  return sources;
}

} // namespace fuser
")

# Only touch the output when it changed, so nothing is recompiled needlessly.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" _old)
  if(_old STREQUAL _text)
    file(TOUCH_NOCREATE "${OUTPUT}")
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${_text}")
