"""The platform wheel: the single executable inside the package.

    ROOKERY_WHEEL_EXECUTABLE=../dist-sea/rookery-linux-x64 python3 -m build --wheel --no-isolation .

copies the executable to ``rookery_bin/rookery`` in the wheel and tags the
wheel for this machine's platform (``py3-none-linux_x86_64``), or for
ROOKERY_WHEEL_PLATFORM (e.g. ``manylinux_2_28_x86_64``: Node 20's Linux
build wants glibc 2.28). Without the variable the wheel is pure
(``py3-none-any``) and finds the command elsewhere. Everything else is in
pyproject.toml.
"""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # building an sdist without the wheel package
    bdist_wheel = None

EXECUTABLE = os.environ.get("ROOKERY_WHEEL_EXECUTABLE")
if EXECUTABLE and not (os.path.isfile(EXECUTABLE) and os.access(EXECUTABLE, os.X_OK)):
    raise SystemExit("ROOKERY_WHEEL_EXECUTABLE is %r, which is not an executable file (npm run build:sea makes "
                     "dist-sea/rookery-linux-x64)" % EXECUTABLE)


class BuildPyWithExecutable(build_py):
    def run(self):
        super().run()
        # into the build tree, never the source tree: a checkout keeps finding the command as before
        target = os.path.join(self.build_lib, "rookery_bin", "rookery")
        if EXECUTABLE:
            shutil.copyfile(EXECUTABLE, target)
            os.chmod(target, 0o755)
        elif os.path.exists(target):
            # left by an earlier platform build in the same build/ folder: a pure wheel must not carry it
            os.remove(target)


commands = {"build_py": BuildPyWithExecutable}

if bdist_wheel is not None:
    class PlatformWheel(bdist_wheel):
        def finalize_options(self):
            super().finalize_options()
            if EXECUTABLE:
                self.root_is_pure = False

        def get_tag(self):
            tag = super().get_tag()
            if not EXECUTABLE:
                return tag
            # no Python code is compiled: any Python 3, no ABI, only the platform the executable runs on
            return "py3", "none", os.environ.get("ROOKERY_WHEEL_PLATFORM") or tag[2]

    commands["bdist_wheel"] = PlatformWheel

setup(cmdclass=commands)
