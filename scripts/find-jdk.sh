# Sourced by ./tailor and .ci/run: picks a JDK >= 21 the same way for both.
# Order: $JAVA_HOME, then /usr/lib/jvm/* (newest first), then the java on PATH.
# On success sets and exports JAVA_HOME; on failure prints why and returns 1.

tailor_jdk_feature() {   # prints the feature release of the JDK at $1 (17, 21, 25, ...) or nothing
  local home=$1 version=""
  [ -x "$home/bin/java" ] || return 0
  if [ -r "$home/release" ]; then
    version=$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$home/release")
  fi
  if [ -z "$version" ]; then
    version=$("$home/bin/java" -XshowSettings:properties -version 2>&1 \
      | sed -n 's/^ *java.specification.version = //p')
  fi
  version=${version#1.}
  printf '%s\n' "${version%%[.+-]*}"
}

tailor_find_jdk() {
  local min=21 candidate feature tried=()
  local -a candidates=()
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  local dir
  for dir in $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV); do candidates+=("${dir%/}"); done
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  for candidate in "${candidates[@]}"; do
    feature=$(tailor_jdk_feature "$candidate")
    tried+=("$candidate (${feature:-no java})")
    if [ -n "$feature" ] && [ "$feature" -ge "$min" ] 2>/dev/null && [ -x "$candidate/bin/javac" ]; then
      export JAVA_HOME="$candidate"
      return 0
    fi
  done
  {
    echo "error: Tailor needs a JDK $min or newer (java and javac), and none was found."
    if [ ${#tried[@]} -gt 0 ]; then
      echo "Looked at, in order:"
      printf '  %s\n' "${tried[@]}"
    else
      echo "Looked at \$JAVA_HOME, /usr/lib/jvm/* and the java on PATH: none is set or present."
    fi
    echo "Install one (for example Temurin 21 or 25) and point JAVA_HOME at it."
  } >&2
  return 1
}
