# Sourced by the launch scripts: their --dry-run flag and `run`, which runs a
# command or, in a dry run, prints it (one line, quoted for a shell) instead.
# shellcheck shell=bash

dry_run=0
args=()

# Sets dry_run and leaves the other arguments, in order, in the array args.
parse_dry_run() {
  local arg
  for arg in "$@"; do
    if [ "$arg" = "--dry-run" ]; then
      dry_run=1
    else
      args+=("$arg")
    fi
  done
}

run() {
  if [ "$dry_run" = 1 ]; then
    local arg line=""
    for arg in "$@"; do
      if [[ $arg =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then
        line+=" $arg"
      else
        line+=" '${arg//\'/\'\\\'\'}'"
      fi
    done
    echo "${line# }"
  else
    "$@"
  fi
}
