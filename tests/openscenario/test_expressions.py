"""``${...}`` expressions: the standard's arithmetic and functions, esmini's constants and
string concatenation, and refusals that say what is wrong in the expression's own terms."""

from __future__ import annotations

import math

import pytest

from vcosim.openscenario.expressions import ExpressionError, evaluate


def test_the_constants_pi_and_e_are_known() -> None:
    assert evaluate("pi", {}) == repr(math.pi)
    assert evaluate("-pi/2", {}) == repr(-math.pi / 2)
    assert evaluate("$alpha*pi/180", {"alpha": "90"}) == repr(90 * math.pi / 180)
    assert evaluate("3 * pi / 4 + $angle", {"angle": "0.5"}) == repr(3 * math.pi / 4 + 0.5)
    assert evaluate("e", {}) == repr(math.e)


def test_every_function_of_the_standard_computes_its_value() -> None:
    cases = {
        "round(2.5)": "3", "round(-0.4)": "0", "floor(-1.5)": "-2", "ceil(1.2)": "2",
        "sqrt(16)": "4", "pow(2, 10)": "1024", "sin(0)": "0", "cos(0)": "1",
        "tan(0)": "0", "asin(1)": repr(math.pi / 2), "acos(1)": "0", "atan(1)": repr(math.pi / 4),
        "sign(-3.5)": "-1", "sign(0)": "0", "sign(2)": "1", "abs(-7)": "7",
        "max(3, 8)": "8", "min(3, 8)": "3", "2 ** 3": "8", "7 % 4": "3",
    }  # fmt: skip
    for expression, value in cases.items():
        assert evaluate(expression, {}) == value, expression


def test_the_ncap_overlap_expression_evaluates() -> None:
    """OSC-NCAP's CCR lateral offset: sign, min and abs together."""
    given = {"Overlap": "-50", "GVT_width": "1.8", "Ego_width": "2.0"}
    expression = (
        "sign($Overlap)*min(1.0,100.0-$Overlap)"
        "*($GVT_width/2-$Ego_width*((abs($Overlap)-50.0)/100.0))"
    )
    assert float(evaluate(expression, given)) == pytest.approx(-0.9)


def test_words_joined_by_plus_are_concatenated_as_esmini_does() -> None:
    assert (
        evaluate("BrakeCondition_HWT + _ + $HeadwayTime_Brake", {"HeadwayTime_Brake": "0.7"})
        == "BrakeCondition_HWT_0.7"
    )
    assert evaluate("$entity_name + trajectory event", {"entity_name": "Target"}) == (
        "Targettrajectory event"
    )
    assert evaluate("$name + 2", {"name": "car"}) == "car2"
    assert evaluate("$a + $b", {"a": "1", "b": "2"}) == "3"  # numbers still add
    assert evaluate("pi + 1", {}) == repr(math.pi + 1)


def test_a_parameter_alone_keeps_its_text() -> None:
    assert evaluate("$who", {"who": "Ego"}) == "Ego"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__(1)", "'__import__(1)' is not an OpenSCENARIO expression: the functions"),
        ("foo(1)", "'foo(1)' is not an OpenSCENARIO expression: the functions are round, floor"),
        ("min(1)", "min() takes 2 argument(s): 'min(1)'"),
        ("speed * 2", "'speed' is not a number, a $parameter or a constant (pi, e)"),
        ("$who * 2", "the parameter 'who' is 'Ego', not a number"),
        ("$missing + 1", "no parameter named 'missing'"),
        ("1 / 0", "'1 / 0' divides by zero"),
        ("sqrt(-1)", "'sqrt(-1)': a function is given a value outside its domain"),
        ("2 *", "'2 *' is not an OpenSCENARIO expression"),
        ("[1, 2]", "'[1, 2]' is not an OpenSCENARIO expression"),
        ("$x.real", "'$x.real' is not an OpenSCENARIO expression"),
    ],
)
def test_a_refusal_says_what_is_wrong_without_python_terms(expression: str, message: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        evaluate(expression, {"who": "Ego", "x": "1"})
    assert str(caught.value).startswith(message)
    for python in ("Name(", "Call(", "ctx=", "Load()", "Attribute(", "List("):
        assert python not in str(caught.value)
