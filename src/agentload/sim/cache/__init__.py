"""A data-parallel rank's KV cache, behind one protocol (`protocol.KvCache`).

Contract: a cache answers what prefix of a prompt it holds (`match`, read-only), reserves
memory for a request (`admit`), stores its prompt when its prefill is done (`insert`), and
frees it when it finishes or is dropped (`release`, `cancel`); sizes in tokens, times in
virtual seconds, deterministic. Two caches keep it: SGLang's and vLLM's radix tree shared by
all sequences (`radix`), and llama.cpp's server slots with their RAM prompt cache (`slots`).
The rank holds what a cache hands it as opaque tokens; which backend keeps which cache is
`protocol.cache_kind`.
"""
