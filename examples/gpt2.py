"""GPT-2 on pytc: prefill a prompt, then decode greedily (or by sampling) with a key/value cache written in place and one
TinyJit step whose position is a bound Variable, so a single compile serves every position.

  python examples/gpt2.py                                  # a small random model, token ids as the prompt
  python examples/gpt2.py --weights model.safetensors      # a checkpoint: safetensors, PyTorch (.bin/.pt) or GGUF
  python examples/gpt2.py --weights gpt2.bin --model gpt2 --prompt "Hello"   # text needs tiktoken installed

A checkpoint uses Hugging Face's GPT-2 names (h.0.attn.c_attn.weight, ...; GGUF names are mapped to them); its sizes
come from --model (gpt2, gpt2-medium, gpt2-large, gpt2-xl) or, for GGUF, from its metadata. Prints the tokens (or text)
and the decode speed in tokens per second."""
from __future__ import annotations

import argparse
import pathlib
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from pytc import Tensor, TinyJit, Variable  # noqa: E402
from pytc.nn import Embedding, LayerNorm, Linear  # noqa: E402
from pytc.nn.state import gguf_load, load_state_dict, safe_load, torch_load  # noqa: E402


@dataclass(frozen=True)
class Config:
  n_layers: int = 2
  n_heads: int = 2
  dim: int = 64
  vocab_size: int = 256
  max_context: int = 64
  norm_eps: float = 1e-5


SIZES = {"gpt2": Config(12, 12, 768, 50257, 1024), "gpt2-medium": Config(24, 16, 1024, 50257, 1024),
         "gpt2-large": Config(36, 20, 1280, 50257, 1024), "gpt2-xl": Config(48, 25, 1600, 50257, 1024)}


class Attention:
  def __init__(self, config: Config):
    self.c_attn, self.c_proj = Linear(config.dim, 3 * config.dim), Linear(config.dim, config.dim)
    self.n_heads, self.head_dim, self.max_context = config.n_heads, config.dim // config.n_heads, config.max_context
    self.cache: Tensor | None = None

  def __call__(self, x: Tensor, start_pos: Variable | int) -> Tensor:
    batch, length, dim = x.shape
    qkv = self.c_attn(x).reshape(batch, length, 3, self.n_heads, self.head_dim)
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    if self.cache is None:
      self.cache = Tensor.zeros(2, batch, self.max_context, self.n_heads, self.head_dim, dtype=x.dtype).contiguous().realize()
    self.cache[:, :, start_pos:start_pos + length].assign(Tensor.stack(k, v)).realize()
    keys, values = self.cache[0][:, :start_pos + length], self.cache[1][:, :start_pos + length]
    mask = None
    if length > 1: mask = Tensor.full((1, 1, length, start_pos + length), float("-inf"), dtype=x.dtype).triu(start_pos + 1)
    out = q.transpose(1, 2).scaled_dot_product_attention(keys.transpose(1, 2), values.transpose(1, 2), mask)
    return self.c_proj(out.transpose(1, 2).reshape(batch, length, dim))


class Block:
  def __init__(self, config: Config):
    self.ln_1, self.ln_2 = LayerNorm(config.dim, config.norm_eps), LayerNorm(config.dim, config.norm_eps)
    self.attn = Attention(config)
    self.mlp_fc, self.mlp_proj = Linear(config.dim, 4 * config.dim), Linear(4 * config.dim, config.dim)

  def __call__(self, x: Tensor, start_pos: Variable | int) -> Tensor:
    h = x + self.attn(self.ln_1(x), start_pos)
    return (h + self.mlp_proj(self.mlp_fc(self.ln_2(h)).gelu())).contiguous()


class GPT2:
  def __init__(self, config: Config):
    self.config = config
    self.wte, self.wpe = Embedding(config.vocab_size, config.dim), Embedding(config.max_context, config.dim)
    self.h = [Block(config) for _ in range(config.n_layers)]
    self.ln_f = LayerNorm(config.dim, config.norm_eps)
    self.lm_head = Linear(config.dim, config.vocab_size, bias=False)
    self.positions = Tensor.arange(config.max_context).reshape(1, -1).realize()
    self.decode_step = TinyJit(self.next_token)

  def logits(self, tokens: Tensor, start_pos: Variable | int) -> Tensor:
    """The last position's logits for `tokens` (batch, length) placed at start_pos onwards."""
    length = tokens.shape[1]
    h = self.wte(tokens) + self.wpe(self.positions.shrink((None, (start_pos, start_pos + length))))
    for block in self.h: h = block(h, start_pos)
    return self.lm_head(self.ln_f(h[:, -1, :]))

  def next_token(self, tokens: Tensor, start_pos: Variable | int, temperature: float = 0.0) -> Tensor:
    logits = self.logits(tokens, start_pos)
    if temperature < 1e-6: return logits.argmax(-1).cast("int32").realize()
    return (logits / temperature).softmax().multinomial().flatten().cast("int32").realize()

  def generate(self, prompt: list[int], count: int, temperature: float = 0.0) -> tuple[list[int], float]:
    """The prompt followed by `count` tokens, and the decode steps' tokens per second (the first step, which compiles, and the
    prefill left out)."""
    if not prompt: raise ValueError("generate needs a prompt of at least one token")
    if len(prompt) + count > self.config.max_context:
      raise ValueError(f"{len(prompt)} prompt tokens and {count} more exceed the model's context of {self.config.max_context}")
    tokens = list(prompt)
    for _ in range(count):
      at = len(tokens) - 1 if len(tokens) > len(prompt) else 0
      if at == 0: step = self.next_token(Tensor([tokens], dtype="int32"), 0, temperature)
      else:
        if at == len(prompt) + 1: started = time.perf_counter()
        position = Variable("start_pos", 1, self.config.max_context - 1).bind(at)
        step = self.decode_step(Tensor([[tokens[-1]]], dtype="int32"), position, temperature)
      tokens.append(int(step.numpy()[0]))
    timed = count - 2
    return tokens, timed / (time.perf_counter() - started) if timed > 0 else float("nan")


# *** checkpoints ***

CONV1D_WEIGHTS = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
GGUF_NAMES = [("blk.", "h."), (".attn_qkv.", ".attn.c_attn."), (".attn_output.", ".attn.c_proj."), (".ffn_up.", ".mlp.c_fc."),
              (".ffn_down.", ".mlp.c_proj."), (".attn_norm.", ".ln_1."), (".ffn_norm.", ".ln_2."), ("token_embd.", "wte."),
              ("position_embd.", "wpe."), ("output_norm.", "ln_f."), ("output.", "lm_head.")]


def read_checkpoint(path: pathlib.Path) -> tuple[dict[str, Tensor], Config | None]:
  """The tensors of a GPT-2 checkpoint by Hugging Face's names (Conv1D weights transposed to Linear's layout), and the
  sizes a GGUF file states."""
  if path.suffix == ".gguf":
    metadata, tensors = gguf_load(Tensor(path))
    config = Config(metadata["gpt2.block_count"], metadata["gpt2.attention.head_count"], metadata["gpt2.embedding_length"],
                    tensors["token_embd.weight"].shape[0], metadata["gpt2.context_length"], metadata["gpt2.attention.layer_norm_epsilon"])
    renamed = {}
    for name, tensor in tensors.items():
      for old, new in GGUF_NAMES: name = name.replace(old, new)
      renamed[name] = tensor
    return renamed, config
  state = safe_load(path) if path.suffix == ".safetensors" else torch_load(path)
  state = {name.removeprefix("transformer."): tensor for name, tensor in state.items()}
  return {name: tensor.T if name.endswith(CONV1D_WEIGHTS) else tensor for name, tensor in state.items()}, None


def load(model: GPT2, state: dict[str, Tensor]) -> None:
  """The checkpoint's tensors into the model: the MLP's names mapped, the head tied to the token embedding when absent."""
  state = {name.replace("mlp.c_fc.", "mlp_fc.").replace("mlp.c_proj.", "mlp_proj."): tensor for name, tensor in state.items()
           if not name.endswith(".attn.bias") and not name.endswith(".attn.masked_bias")}
  state.setdefault("lm_head.weight", state["wte.weight"])
  load_state_dict(model, {name: tensor.cast(model.wte.weight.dtype) for name, tensor in state.items()}, strict=False)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--weights", type=pathlib.Path, help="a checkpoint (.safetensors, .bin/.pt, .gguf); random weights without")
  parser.add_argument("--model", choices=sorted(SIZES), help="the checkpoint's sizes (not needed for GGUF)")
  parser.add_argument("--prompt", default="1,2,3,4", help="comma-separated token ids, or text when tiktoken is installed")
  parser.add_argument("--count", type=int, default=32, help="tokens to generate")
  parser.add_argument("--temperature", type=float, default=0.0, help="0 decodes greedily")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  Tensor.manual_seed(args.seed)
  state, config = read_checkpoint(args.weights) if args.weights else ({}, None)
  config = config or (SIZES[args.model] if args.model else Config())
  model = GPT2(config)
  if state: load(model, state)
  tokenizer = None
  if all(part.strip().isdigit() for part in args.prompt.split(",")): prompt = [int(part) for part in args.prompt.split(",")]
  else:
    import tiktoken
    tokenizer = tiktoken.get_encoding("gpt2")
    prompt = tokenizer.encode(args.prompt)
  tokens, rate = model.generate(prompt, args.count, args.temperature)
  print(tokenizer.decode(tokens) if tokenizer else tokens)
  print(f"{args.count} tokens, decode {rate:.1f} tokens/s ({1e3 / rate:.2f} ms/token)")


if __name__ == "__main__":
  main()
