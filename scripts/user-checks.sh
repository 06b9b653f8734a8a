# Not run on its own: the checks of what a user of an installed OpenND gets,
# shared by scripts/check-install.sh (a cmake --install prefix) and
# scripts/check-deb.sh (the Debian packages). Each prints why and returns 1
# on failure. $root is the checkout.

# consumer_hello DIR [PREFIX]: a CMake project in DIR that finds OpenND
# (in PREFIX if given, else where CMake looks) and builds examples/hello.cpp
# against OpenND::opennd, and again with OpenND::opennd_ndk; prints the
# path of the first program.
consumer_hello() {
  local dir=$1 prefix=${2:-}
  mkdir -p "$dir"
  cat >"$dir/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(consumer CXX)
find_package(OpenND REQUIRED)
add_executable(hello $root/examples/hello.cpp)
target_link_libraries(hello PRIVATE OpenND::opennd)
add_executable(hello_ndk $root/examples/hello.cpp)
target_link_libraries(hello_ndk PRIVATE OpenND::opennd OpenND::opennd_ndk)
CMAKE
  cmake -S "$dir" -B "$dir/build" ${prefix:+-DCMAKE_PREFIX_PATH="$prefix"} >/dev/null &&
    cmake --build "$dir/build" >/dev/null || { echo "find_package(OpenND): the consumer does not build" >&2; return 1; }
  echo "$dir/build/hello"
}

# man_finds MANPATH SECTION PAGE TEXT: man shows PAGE(SECTION) with TEXT
# in it (MANPATH "": the system's). Nothing to check without man.
man_finds() {
  command -v man >/dev/null || return 0
  MANPATH=${1:-$(manpath 2>/dev/null)} man -P cat "$2" "$3" 2>/dev/null | grep -q "$4" ||
    { echo "man does not find $3($2)${1:+ in $1}" >&2; return 1; }
}

# completions_installed DIR TOOL...: each tool's bash completion is in DIR.
completions_installed() {
  local dir=$1 tool
  shift
  for tool; do
    [ -s "$dir/$tool" ] || { echo "no bash completion for $tool in $dir" >&2; return 1; }
  done
}
