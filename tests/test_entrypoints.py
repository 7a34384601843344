"""One resolver for user code: files, modules from the current directory, classes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from vcosim.entrypoints import instantiate, load_object, load_user_code
from vcosim.errors import ConfigError, UnknownNameError


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    (tmp_path / "my_step.py").write_text(
        "def step(msg):\n    return None\n\n"
        "class Keep:\n    def __call__(self, msg):\n        return {'throttle': 0.1}\n"
    )
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield tmp_path
    sys.modules.pop("my_step", None)


def test_a_file_and_a_module_in_the_current_directory_name_the_same_code(user_dir):
    by_file = load_user_code(str(user_dir / "my_step.py") + ":step")
    by_module = load_user_code("my_step:step")
    assert by_file.__name__ == by_module.__name__ == "step"
    assert by_module.__module__ == "my_step"


def test_a_class_is_instantiated_the_same_way_everywhere(user_dir):
    keep = instantiate(load_user_code("my_step.py:Keep"))
    assert keep(None) == {"throttle": 0.1}
    assert instantiate(load_user_code("my_step:step")).__name__ == "step"


def test_a_module_alone_where_a_module_of_functions_is_wanted(user_dir):
    module = load_user_code("my_step", option="--custom-hooks", module_ok=True)
    assert hasattr(module, "step")
    with pytest.raises(ConfigError, match="expected FILE.py:NAME or module:NAME$"):
        load_user_code("my_step")


@pytest.mark.parametrize(
    "spec,message",
    [
        ("missing.py:step", "--function: no such file: missing.py"),
        ("missing:step", "--function 'missing': no module of that name here"),
        ("broken.py:step", "importing broken.py failed: RuntimeError: boom"),
        ("broken:step", "--function 'broken': importing it failed: RuntimeError: boom"),
    ],
)
def test_problems_are_one_line_naming_the_spec(user_dir, spec, message):
    with pytest.raises(ConfigError) as caught:
        load_user_code(spec)
    (problem,) = caught.value.problems
    assert message in problem and "\n" not in problem


def test_a_misspelt_name_suggests_the_closest(user_dir):
    with pytest.raises(UnknownNameError, match="did you mean 'step'"):
        load_user_code("my_step.py:stepp")
    with pytest.raises(UnknownNameError, match="did you mean 'Cruise'"):
        load_object("vcosim.controllers.cruise:Cruse")


def test_vcosim_controller_reports_a_bad_function_in_one_line(user_dir):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "vcosim",
            "controller",
            "--function",
            "my_step:stepp",
            "--duration",
            "0.01",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=user_dir,
    )
    assert result.returncode == 2
    assert "did you mean 'step'" in result.stderr and "Traceback" not in result.stderr
