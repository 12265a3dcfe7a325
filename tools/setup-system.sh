#!/usr/bin/env bash
# Installs the system packages gpu_jiggle needs when they are missing: Mesa's EGL and DRI
# drivers (llvmpipe, the OpenGL 4.3 renderer used without a GPU), the X libraries glfw
# loads, Xvfb for the window tests, and node and npm for the Khronos glTF validator. Needs
# root (or sudo); does nothing when all is there.
#
# On Debian 12 (bookworm), whose Mesa is 22.3, it takes Mesa from bookworm-backports (25.0):
# at 1M segments the solver's frames run 1.1-2.5x faster on 25.0 on the same CPU, a character's
# 1,000 segments about 10 % slower (llvmpipe 22.3 moves each SIMD lane of a storage-buffer
# access in a loop of its own; docs/PERFORMANCE.md, "Mesa 25 against Mesa 22.3").
# GPU_JIGGLE_SYSTEM_MESA=1 keeps the distribution's Mesa.
set -euo pipefail

missing=()
have_lib() { ldconfig -p 2>/dev/null | grep -F "$1" >/dev/null; }  # not grep -q: under pipefail its early exit fails ldconfig (SIGPIPE)
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

# Mesa from bookworm-backports where the distribution is Debian 12, no GPU device is visible
# (a /dev/dri render node or NVIDIA's devices: there Mesa may be the GPU's driver, the owner's
# choice) and the installed llvmpipe is older than Mesa 24, or none is installed. A speed-up,
# never a reason to fail: without root or sudo, or where backports cannot be reached, Debian's
# Mesa is kept, or installed where it is missing.
backports=()
mesa_missing=()
if [ "${GPU_JIGGLE_SYSTEM_MESA:-0}" != 1 ] && [ -r /etc/os-release ] \
    && grep -qx 'VERSION_CODENAME=bookworm' /etc/os-release && grep -qx 'ID=debian' /etc/os-release \
    && ! ls /dev/dri/renderD* /dev/nvidiactl >/dev/null 2>&1; then
  mesa=$(dpkg-query -W -f='${Version}' libgl1-mesa-dri 2>/dev/null || true)
  if [ -z "$mesa" ] || [ "${mesa%%.*}" -lt 24 ] 2>/dev/null; then
    backports=(libegl-mesa0 libgl1-mesa-dri)
    rest=()
    for package in "${missing[@]}"; do
      case " ${backports[*]} " in *" $package "*) mesa_missing+=("$package") ;; *) rest+=("$package") ;; esac
    done
    missing=("${rest[@]}")
  fi
fi

if [ ${#missing[@]} -eq 0 ] && [ ${#backports[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    needed=("${missing[@]}" "${mesa_missing[@]}")
    if [ ${#needed[@]} -eq 0 ]; then
      echo "not root and no sudo: keeping this machine's Mesa (as root, setup would take Mesa 25 from" \
           "bookworm-backports, whose llvmpipe runs the solver faster)" >&2
      exit 0
    fi
    echo "not root and no sudo: please install ${needed[*]} (Debian/Ubuntu package names)" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
added=""
if [ ${#backports[@]} -gt 0 ]; then
  echo "installing Mesa from bookworm-backports (GPU_JIGGLE_SYSTEM_MESA=1 keeps Debian 12's): ${backports[*]}"
  if ! grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    added=/etc/apt/sources.list.d/bookworm-backports.list
    echo 'deb http://deb.debian.org/debian bookworm-backports main' | $sudo tee "$added" >/dev/null
  fi
fi
if ! $sudo apt-get update -qq; then
  [ -n "$added" ] || exit 1  # the sources were the machine's own: nothing of ours to take back
  echo "apt-get update failed with bookworm-backports added: removed it, keeping Debian 12's Mesa" >&2
  $sudo rm -f "$added"
  backports=()
  missing+=("${mesa_missing[@]}")
  $sudo apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing system packages: ${missing[*]}"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#backports[@]} -gt 0 ] \
    && ! $sudo apt-get install -y -qq --no-install-recommends -t bookworm-backports "${backports[@]}" >/dev/null; then
  echo "could not install Mesa from bookworm-backports: keeping Debian 12's (its llvmpipe runs the solver slower)" >&2
  if [ ${#mesa_missing[@]} -gt 0 ]; then
    $sudo apt-get install -y -qq --no-install-recommends "${mesa_missing[@]}" >/dev/null
  fi
fi
