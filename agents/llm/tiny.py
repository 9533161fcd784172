"""A tiny randomly initialised causal LM and its tokenizer, built here and saved to a folder: ``hf:`` without a
download, for the tests and the smoke measurement (``evaluation/studies/llm_tiny.py``). It plays like noise:
whatever share of its first replies is legal measures the parser's forgiveness and the prompt, not a model.

    from cardzoo.agents.llm.tiny import build_tiny_model
    build_tiny_model("/tmp/tiny")          # then the agent spec hf:/tmp/tiny

The tokenizer is a byte-level BPE trained on ``corpus`` (default: every game's rules text and a few move names),
so it encodes any reply; the model a two-layer Llama of width 32 with a context of 8192 tokens.
"""

from __future__ import annotations

from pathlib import Path


def default_corpus() -> list[str]:
    from cardzoo.envs.registry import GAMES
    from cardzoo.envs.text import text_view

    texts = [text_view(name).rules() for name in GAMES]
    return texts + ["Legal moves: 1) 2C 2) QS 3) 10H [play] QS bid 75 pass wait turn 7H@0 > I need a 9"]


def build_tiny_model(path: str | Path, seed: int = 0, corpus: list[str] | None = None, vocab_size: int = 512,
                     context: int = 8192, chat_template: str | None = None) -> Path:
    """Save a tiny random Llama (``context`` positions) and its tokenizer (with ``chat_template`` if given) in
    ``path``; returns the folder."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<s>", "</s>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus or default_corpus(), trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    if chat_template:
        tokenizer.chat_template = chat_template
    tokenizer.save_pretrained(folder)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=context,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder
