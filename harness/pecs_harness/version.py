"""The suite version: the git commit of a checkout ("-dirty" with uncommitted changes to
tracked files), or "unknown" outside one. The runners carry theirs from the build
(conformance/framework/workspace_status.sh); the driver records its own beside them."""
import subprocess


def checkout_version(root: str) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()
    try:
        v = git("rev-parse", "--short=12", "HEAD")
        if git("status", "--porcelain", "--untracked-files=no"):
            v += "-dirty"
        return v or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"
