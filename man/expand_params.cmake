# cmake -DIN=page.scd.in -DPARAMS=params.txt -DOUT=page.scd -P expand_params.cmake
# Puts `ndinfo --params` (the one list of OPENND_* variables) into a scdoc
# page at @ENVIRONMENT@, one entry per variable.
file(STRINGS "${PARAMS}" lines)
set(entries "")
set(name "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "([_*\\\\])" "\\\\\\1" esc "${line}")
  if(line MATCHES "^([A-Z0-9_]+) \\((.*)\\)$")
    set(component "${CMAKE_MATCH_2}")  # (before the next regex resets the matches)
    string(REGEX REPLACE "_" "\\\\_" name "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^    default: (.*)$")
    string(REGEX REPLACE "([_*\\\\])" "\\\\\\1" default "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^    set to: ")
    # the value in effect where the page was built: not the page's business
  elseif(line MATCHES "^    (.+)$" AND NOT name STREQUAL "")
    string(REGEX REPLACE "^    " "" help "${esc}")
    string(APPEND entries "*${name}* (${component}; default: ${default})\n\t${help}\n\n")
    set(name "")
  endif()
endforeach()
file(READ "${IN}" page)
string(REPLACE "@ENVIRONMENT@\n" "${entries}" page "${page}")
file(WRITE "${OUT}" "${page}")
