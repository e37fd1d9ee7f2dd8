# bp_component(<name> [SOURCES extra.cpp...] [PUBLIC deps...] [PRIVATE deps...])
# The one recipe for a component library, called from the component's folder:
# a static library bp_<name> (alias bp::<name>, exported as bp::<name> too)
# built from every src/**/*.cpp under the calling folder plus SOURCES, with
# include/ as its public include directory (headers are included as
# "bp/..."; installed under include/), linked PUBLIC to the dependencies its
# public headers use and PRIVATE to the rest and to bp_warnings (a build-only
# setting, never exported). Creates nothing when the folder has no sources yet.
function(bp_component name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  file(GLOB_RECURSE src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  if(NOT src AND NOT ARG_SOURCES)
    return()
  endif()
  add_library(bp_${name} STATIC ${src} ${ARG_SOURCES})
  add_library(bp::${name} ALIAS bp_${name})
  set_target_properties(bp_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(bp_${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(bp_${name} PUBLIC ${ARG_PUBLIC}
    PRIVATE ${ARG_PRIVATE} $<BUILD_INTERFACE:bp_warnings>)
endfunction()
