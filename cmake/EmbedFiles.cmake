# bp_embed_files(OUT_CPP NAMESPACE ns [PRELUDE p.lua] [PARTS parts.txt] FILES a.lua b.lua)
# Generates a .cpp at build time that defines, for each file `name.ext`,
#   extern const std::string_view ns::k<Name>;  (e.g. admit.lua -> kAdmitLua)
# so Lua scripts live as .lua files in the tree, never as C++ string literals.
# With PRELUDE, each embedded text is the prelude's text followed by the
# file's (one Lua chunk: the file sees the prelude's locals); the prelude
# itself is not embedded on its own. With PARTS (lines of file names, the
# first naming a script, the others following it in order; '#' comments),
# a script's text is its files in that order, and the following files are
# not embedded on their own. PARTS and the later parts sit beside FILES.
function(bp_embed_files out_cpp)
  cmake_parse_arguments(ARG "" "NAMESPACE;PRELUDE;PARTS" "FILES" ${ARGN})
  string(REPLACE ";" "$<SEMICOLON>" files_arg "${ARG_FILES}")
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cpp} -DNS=${ARG_NAMESPACE} "-DPRELUDE=${ARG_PRELUDE}"
            "-DPARTS=${ARG_PARTS}"
            "-DFILES=${files_arg}" -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesRun.cmake
    DEPENDS ${ARG_FILES} ${ARG_PRELUDE} ${ARG_PARTS} ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesRun.cmake
    COMMENT "Embedding ${ARG_FILES}"
    VERBATIM)
endfunction()
