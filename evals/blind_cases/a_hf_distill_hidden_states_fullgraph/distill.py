"""Layer-wise distillation of a small BERT student from a (frozen) BERT teacher.

The student is trained on the teacher's soft labels plus an MSE loss between
mapped hidden states (TinyBERT style). The student forward is compiled with
fullgraph=True so that we notice graph breaks early instead of silently losing
speed on the cluster.
"""
import argparse
import logging
import time

import torch
import torch.nn.functional as F
from transformers import BertConfig, BertForSequenceClassification

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("distill")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=48)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--temperature", type=float, default=2.0)
    p.add_argument("--alpha-hidden", type=float, default=1.0)
    p.add_argument("--num-labels", type=int, default=4)
    p.add_argument("--vocab-size", type=int, default=2000)
    p.add_argument("--compile", action="store_true", default=True)
    p.add_argument("--no-compile", dest="compile", action="store_false")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def build_models(args):
    teacher_cfg = BertConfig(
        vocab_size=args.vocab_size, hidden_size=96, num_hidden_layers=4, num_attention_heads=4,
        intermediate_size=192, max_position_embeddings=128, num_labels=args.num_labels,
    )
    student_cfg = BertConfig(
        vocab_size=args.vocab_size, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=128, num_labels=args.num_labels,
    )
    teacher = BertForSequenceClassification(teacher_cfg).eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = BertForSequenceClassification(student_cfg).train()
    return teacher, student


class HiddenProjector(torch.nn.Module):
    """Maps student hidden states to the teacher width for the hidden-state loss."""

    def __init__(self, d_student, d_teacher, n_maps):
        super().__init__()
        self.proj = torch.nn.ModuleList(torch.nn.Linear(d_student, d_teacher) for _ in range(n_maps))

    def forward(self, hidden_states):
        return [proj(h) for proj, h in zip(self.proj, hidden_states)]


def synthetic_batches(args, generator):
    while True:
        ids = torch.randint(1, args.vocab_size, (args.batch_size, args.seq_len), generator=generator)
        lengths = torch.randint(args.seq_len // 2, args.seq_len + 1, (args.batch_size,), generator=generator)
        mask = (torch.arange(args.seq_len)[None, :] < lengths[:, None]).long()
        ids = ids * mask
        yield ids, mask


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    teacher, student = build_models(args)
    # student layer i  <->  teacher layer 2*i (embeddings map to embeddings)
    layer_map = [0, 2, 4]
    projector = HiddenProjector(student.config.hidden_size, teacher.config.hidden_size, len(layer_map))

    params = list(student.parameters()) + list(projector.parameters())
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)

    student_fwd = student
    if args.compile:
        log.info("compiling student (fullgraph=True)")
        student_fwd = torch.compile(student, fullgraph=True)

    gen = torch.Generator().manual_seed(args.seed)
    batches = synthetic_batches(args, gen)
    t_start = time.perf_counter()
    for step in range(1, args.steps + 1):
        ids, mask = next(batches)
        with torch.no_grad():
            t_out = teacher(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        s_out = student_fwd(input_ids=ids, attention_mask=mask, output_hidden_states=True)

        T = args.temperature
        kd = F.kl_div(
            F.log_softmax(s_out.logits / T, dim=-1),
            F.softmax(t_out.logits / T, dim=-1),
            reduction="batchmean",
        ) * T * T
        mapped = projector(s_out.hidden_states)
        m = mask.unsqueeze(-1).float()
        hid = sum(
            (((hs - t_out.hidden_states[j]) ** 2) * m).sum() / (m.sum() * hs.shape[-1])
            for hs, j in zip(mapped, layer_map)
        ) / len(layer_map)
        loss = kd + args.alpha_hidden * hid

        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()

        if step == 1 or step % 10 == 0:
            elapsed = time.perf_counter() - t_start
            log.info("step %d loss %.4f (kd %.4f hidden %.4f) %.1fs", step, loss.item(), kd.item(), hid.item(), elapsed)

    log.info("done: %d steps in %.1fs", args.steps, time.perf_counter() - t_start)


if __name__ == "__main__":
    main()
