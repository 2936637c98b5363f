# Sourced by the tools/*.sh scripts: `stage NAME` prints "== [+M:SS] NAME",
# the time since the script started, so that a long run shows where it is.
FUSER_STAGE_START="${FUSER_STAGE_START:-$(date +%s)}"
export FUSER_STAGE_START
stage() {
  local elapsed=$(( $(date +%s) - FUSER_STAGE_START ))
  printf '== [+%d:%02d] %s\n' $(( elapsed / 60 )) $(( elapsed % 60 )) "$*"
}
