"""Drop-in surfaces for code written against other libraries, each apart from the `Tokenizer` class:

- `bytepair.compat.tiktoken`: tiktoken's `Encoding` interface (`Tokenizer.as_tiktoken()`, `get_encoding`);
- `bytepair.compat.transformers`: what `transformers.AutoTokenizer.from_pretrained` reads
  (`Tokenizer.save_pretrained`, `Tokenizer.from_pretrained`).
"""
