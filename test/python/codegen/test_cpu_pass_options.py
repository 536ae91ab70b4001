"""The options of the CPU kernel passes (pytc-order-loops, pytc-vectorize, pytc-lower-kernels) are typed and range-checked:
every integer option declares its range, values at its ends parse, values just past them are refused naming the option."""
import pytest

from pytc.passes import PASSES, PipelineError, parse_options

CPU_PASSES = ("pytc-order-loops", "pytc-vectorize", "pytc-lower-kernels")


@pytest.mark.parametrize("argument", CPU_PASSES)
def test_every_integer_option_declares_its_range(argument: str) -> None:
  for option in PASSES[argument].options().values():
    assert option.kind is bool or (option.kind is int and option.within is not None), f"{argument}: {option.name} has no range"
    if option.kind is int: assert option.default in option.within, f"{argument}: {option.name}'s default is outside its range"


@pytest.mark.parametrize("argument, text, value", [
  ("pytc-order-loops", "max_accumulators=0", 0), ("pytc-vectorize", "lanes=1", 1), ("pytc-vectorize", "lanes=64", 64),
  ("pytc-vectorize", "rows=64", 64), ("pytc-vectorize", "vectors=16", 16), ("pytc-vectorize", "group=4096", 4096)])
def test_range_ends_parse(argument: str, text: str, value: int) -> None:
  assert parse_options(text, PASSES[argument]) == {text.split("=")[0]: value}


@pytest.mark.parametrize("argument, text", [
  ("pytc-order-loops", "max_accumulators=-1"), ("pytc-vectorize", "lanes=0"), ("pytc-vectorize", "lanes=128"), ("pytc-vectorize", "lanes=24"),
  ("pytc-vectorize", "rows=0"), ("pytc-vectorize", "rows=65"), ("pytc-vectorize", "vectors=0"), ("pytc-vectorize", "vectors=17"),
  ("pytc-vectorize", "group=0"), ("pytc-vectorize", "group=4097")])
def test_values_past_the_range_are_refused(argument: str, text: str) -> None:
  name = text.split("=")[0]
  with pytest.raises(PipelineError, match=f"{argument}: option {name} expects .* from|{argument}: option {name} expects an integer >="):
    parse_options(text, PASSES[argument])


def test_lower_kernels_takes_no_options() -> None:
  with pytest.raises(PipelineError, match="pytc-lower-kernels has no option 'lanes'"): parse_options("lanes=8", PASSES["pytc-lower-kernels"])
