# bp_component(<name> [SOURCES extra.cpp...] [PUBLIC deps...] [PRIVATE deps...])
# The one recipe for a component library, called from the component's folder:
# a static library bp_<name> (alias bp::<name>) built from every src/**/*.cpp
# under the calling folder plus SOURCES, with include/ as its public include
# directory (headers are included as "bp/..."), linked PUBLIC to the
# dependencies its public headers use and PRIVATE to the rest and to
# bp_warnings. Creates nothing when the folder has no sources yet.
function(bp_component name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  file(GLOB_RECURSE src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  if(NOT src AND NOT ARG_SOURCES)
    return()
  endif()
  add_library(bp_${name} STATIC ${src} ${ARG_SOURCES})
  add_library(bp::${name} ALIAS bp_${name})
  target_include_directories(bp_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(bp_${name} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE} bp_warnings)
endfunction()
