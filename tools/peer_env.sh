# Sourced by the GPU benchmark scripts: the Python path of the fuser build
# in $BUILD_DIR and, when the repacked nvFuser wheel with its setup script
# is in .peer/ (copied there from the peer folder, see
# ../shared/peer/README.md; not part of the project), nvFuser beside it.
# Sets PEER_PRELOAD to what nvFuser's process needs in LD_PRELOAD (empty
# without nvFuser).
export PYTHONPATH="$ROOT/python:$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}"
PEER_PRELOAD=""
if [ -f "$ROOT/.peer/nvf-slim.tar.xz" ] && [ -f "$ROOT/.peer/setup.sh" ]; then
  bash "$ROOT/.peer/setup.sh" "$ROOT/.peer/nvf-slim.tar.xz"
fi
if [ -f /tmp/nvf/libshim.so ]; then
  export PYTHONPATH="$PYTHONPATH:/tmp/nvf"
  PEER_PRELOAD=/tmp/nvf/libshim.so
fi
