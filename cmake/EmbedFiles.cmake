# bp_embed_files(OUT_CPP NAMESPACE ns [PRELUDE p.lua] FILES a.lua b.lua)
# Generates a .cpp at build time that defines, for each file `name.ext`,
#   extern const std::string_view ns::k<Name>;  (e.g. admit.lua -> kAdmitLua)
# so Lua scripts live as .lua files in the tree, never as C++ string literals.
# With PRELUDE, each embedded text is the prelude's text followed by the
# file's (one Lua chunk: the file sees the prelude's locals); the prelude
# itself is not embedded on its own.
function(bp_embed_files out_cpp)
  cmake_parse_arguments(ARG "" "NAMESPACE;PRELUDE" "FILES" ${ARGN})
  string(REPLACE ";" "$<SEMICOLON>" files_arg "${ARG_FILES}")
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cpp} -DNS=${ARG_NAMESPACE} "-DPRELUDE=${ARG_PRELUDE}"
            "-DFILES=${files_arg}" -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesRun.cmake
    DEPENDS ${ARG_FILES} ${ARG_PRELUDE} ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesRun.cmake
    COMMENT "Embedding ${ARG_FILES}"
    VERBATIM)
endfunction()
