#!/usr/bin/env bash
# Installs the system packages gpu_jiggle needs when they are missing: Mesa's EGL and DRI
# drivers (llvmpipe, the OpenGL 4.3 renderer used without a GPU), the X libraries glfw
# loads, Xvfb for the window tests, and node and npm for the Khronos glTF validator. Needs
# root (or sudo); does nothing when all is there.
set -euo pipefail

missing=()
have_lib() { ldconfig -p 2>/dev/null | grep -q "$1"; }
have_lib 'libEGL.so.1 '      || missing+=(libegl1)
have_lib 'libEGL_mesa.so.0 ' || missing+=(libegl-mesa0)
have_lib 'libGL.so.1 '       || missing+=(libgl1)
ls /usr/lib/*/dri/swrast_dri.so >/dev/null 2>&1 || missing+=(libgl1-mesa-dri)
have_lib 'libX11.so.6 '      || missing+=(libx11-6)
have_lib 'libXrandr.so.2 '   || missing+=(libxrandr2)
have_lib 'libXinerama.so.1 ' || missing+=(libxinerama1)
have_lib 'libXcursor.so.1 '  || missing+=(libxcursor1)
have_lib 'libXi.so.6 '       || missing+=(libxi6)
have_lib 'libXxf86vm.so.1 '  || missing+=(libxxf86vm1)
command -v Xvfb >/dev/null     || missing+=(xvfb)
command -v xvfb-run >/dev/null || missing+=(xvfb)
command -v xauth >/dev/null    || missing+=(xauth)
command -v node >/dev/null     || missing+=(nodejs)   # the glTF validator the tests run
command -v npm >/dev/null      || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing system packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "not root and no sudo: please install ${missing[*]} (Debian/Ubuntu package names)" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
