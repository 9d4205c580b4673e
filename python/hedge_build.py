"""hedge_build: the PEP 517 build backend of the Python package hedge, standard library only, so
that `pip install ./python` works with no network and no setuptools.

A wheel holds the package hedge/ (its .py files), the compatibility module hedge_stream.py and the
engine's shared library, hedge/libhedge.so, built by `make lib` from the hedge tree this directory
sits in (python/..: pip 21.3 and later build in place) or taken from $HEDGE_LIB when that names a
built libhedge.so. pip install leaves the tree as it found it: a tree without a build/ (a fresh
clone) is built in a temporary folder, removed once the wheel holds the library (a tree with
one, its owner's, is brought up to date in it), and the bytecode Python caches of this module
beside it (python/__pycache__) is removed when the hook's process ends. An sdist holds this directory alone: building a wheel from it needs $HEDGE_LIB
(there is no tree to run make in) and says so.

The hooks: build_wheel, build_sdist, build_editable (the package's directory on sys.path through a
.pth, the library built into the tree's build/lib, where hedge._lib finds it), get_requires_for_*
(nothing), prepare_metadata_for_build_wheel.
"""

import atexit
import base64
import hashlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

sys.dont_write_bytecode = True  # what this module imports from here on caches nothing


def _forget_own_bytecode():
    """pip imports this module from the tree, and Python cached its bytecode there
    (python/__pycache__/hedge_build.*.pyc) before it ran: removed, with the folder when it is
    left empty (a cache: whoever needs it makes it again)."""
    try:
        cache = importlib.util.cache_from_source(os.path.abspath(__file__))
    except (NotImplementedError, ValueError):
        return
    for remove in (os.remove, os.rmdir):
        try:
            remove(cache)
        except OSError:
            pass
        cache = os.path.dirname(cache)


atexit.register(_forget_own_bytecode)

NAME = "hedge"
HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)
SUMMARY = "hedge's evaluation battery on numpy arrays (ctypes over libhedge.so) and its tensor streams"


def _version():
    """hedge's version: the tree's VERSION file, else (an sdist) the PKG-INFO written beside us."""
    for path in (os.path.join(TREE, "VERSION"), os.path.join(HERE, "PKG-INFO")):
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        if path.endswith("VERSION"):
            return text.strip()
        for line in text.splitlines():
            if line.startswith("Version: "):
                return line.split(": ", 1)[1].strip()
    raise RuntimeError("hedge_build: no version: neither %s nor %s"
                       % (os.path.join(TREE, "VERSION"), os.path.join(HERE, "PKG-INFO")))


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: >=3.7\n"
            "Requires-Dist: numpy\nLicense: see the hedge tree\n" % (NAME, _version(), SUMMARY))


def _tag():
    # the package carries a compiled library: one platform, any Python 3 (ctypes, no extension)
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _library(in_tree=False):
    """(the path of a built libhedge.so, a temporary folder to remove after or None): $HEDGE_LIB;
    else `make lib` in the tree's build/ when it has one (its owner's build) or in_tree (an
    editable install, whose package finds the library there); else `make BUILD=TMP lib` in a
    temporary folder, so that the tree is left as it was."""
    given = os.environ.get("HEDGE_LIB")
    if given:
        if not os.path.isfile(given):
            raise RuntimeError("hedge_build: HEDGE_LIB=%s is not a file (expected a built libhedge.so)" % given)
        return given, None
    if not (os.path.isfile(os.path.join(TREE, "Makefile")) and os.path.isfile(os.path.join(TREE, "lib", "engine", "hedge.h"))):
        raise RuntimeError(
            "hedge_build: the hedge tree is not at %s (no Makefile and lib/engine/hedge.h there), so libhedge.so "
            "cannot be built: install from a clone of hedge (pip install ./python, which builds in place) "
            "or set HEDGE_LIB to a built libhedge.so (make lib: build/lib/libhedge.so)" % TREE)
    # the tree's plain build (build/), whatever make or test run called pip: a sanitizer's flags
    # and build directory (make sanitize: build-san) would give a library Python cannot load
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "BUILD", "SANFLAGS")}
    tmp = None
    build = os.path.join(TREE, "build")
    if not (in_tree or os.path.isdir(build)):
        tmp = build = tempfile.mkdtemp(prefix="hedge-build-")
    try:
        cmd = ["make", "-C", TREE, "-j%d" % min(os.cpu_count() or 1, 8), "lib"] + (["BUILD=" + tmp] if tmp else [])
        r = subprocess.run(cmd, env=env, stdout=sys.stderr)
        lib = os.path.join(build, "lib", "libhedge.so")
        if r.returncode != 0 or not os.path.isfile(lib):
            raise RuntimeError("hedge_build: `make -C %s lib` failed (exit %d): see its output above"
                               % (TREE, r.returncode))
    except BaseException:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    return lib, tmp


def _package_files():
    """(path in the wheel, path on disk) of the Python sources, sorted."""
    out = [("hedge_stream.py", os.path.join(HERE, "hedge_stream.py"))]
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            out.append((NAME + "/" + name, os.path.join(pkg, name)))
    return out


class _Wheel:
    """A zip with a RECORD: each file's sha256 (urlsafe base64, unpadded) and size."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))  # the same bytes each build
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append("%s,sha256=%s,%d" % (arcname, digest, len(data)))

    def close(self, distinfo):
        self.record.append(distinfo + "/RECORD,,")
        data = ("\n".join(self.record) + "\n").encode()
        info = zipfile.ZipInfo(distinfo + "/RECORD", date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        self.zip.writestr(info, data)
        self.zip.close()


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _distinfo_files(tag):
    return {"METADATA": _metadata(),
            "WHEEL": "Wheel-Version: 1.0\nGenerator: hedge_build\nRoot-Is-Purelib: false\nTag: %s\n" % tag,
            "top_level.txt": "hedge\nhedge_stream\n"}


def _write_wheel(wheel_directory, contents):
    tag = _tag()
    distinfo = "%s-%s.dist-info" % (NAME, _version())
    name = "%s-%s-%s.whl" % (NAME, _version(), tag)
    w = _Wheel(os.path.join(wheel_directory, name))
    for arcname, data, mode in contents:
        w.add(arcname, data, mode)
    for fname, text in _distinfo_files(tag).items():
        w.add(distinfo + "/" + fname, text.encode())
    w.close(distinfo)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    distinfo = "%s-%s.dist-info" % (NAME, _version())
    os.makedirs(os.path.join(metadata_directory, distinfo), exist_ok=True)
    for fname, text in _distinfo_files(_tag()).items():
        with open(os.path.join(metadata_directory, distinfo, fname), "w") as f:
            f.write(text)
    return distinfo


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    lib, tmp = _library()
    try:
        contents = [(arc, _read(path), 0o644) for arc, path in _package_files()]
        contents.append((NAME + "/libhedge.so", _read(lib), 0o755))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return _write_wheel(wheel_directory, contents)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # the sources stay here; the library stays in the tree's build/lib, where hedge._lib looks
    # when there is none beside the package (HEDGE_LIB is not copied either: set it at run time)
    if not os.environ.get("HEDGE_LIB"):
        _library(in_tree=True)
    return _write_wheel(wheel_directory, [("hedge-editable.pth", (HERE + "\n").encode(), 0o644)])


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    name = base + ".tar.gz"
    files = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")),
             ("hedge_build.py", os.path.join(HERE, "hedge_build.py"))] + _package_files()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        def add(arcname, data):
            info = tarfile.TarInfo(base + "/" + arcname)
            info.size, info.mode, info.mtime = len(data), 0o644, 315532800
            tar.addfile(info, io.BytesIO(data))
        for arc, path in files:
            add(arc, _read(path))
        add("PKG-INFO", _metadata().encode())
    return name
