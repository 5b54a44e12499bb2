"""Nucleotide tokenizer and fixed-length window loader for the scoring job."""
import torch

SPECIAL = ["<pad>", "<bos>", "<eos>", "<unk>"]
BASES = ["A", "C", "G", "T", "N"]


class NucleotideTokenizer:
    def __init__(self, kmer: int = 1):
        self.kmer = kmer
        self.vocab = {tok: i for i, tok in enumerate(SPECIAL + BASES)}
        self.pad_id = self.vocab["<pad>"]
        self.bos_id = self.vocab["<bos>"]
        self.eos_id = self.vocab["<eos>"]
        self.unk_id = self.vocab["<unk>"]

    def __len__(self):
        return len(self.vocab)

    def encode(self, seq: str) -> list[int]:
        return [self.vocab.get(ch, self.unk_id) for ch in seq.upper()]


def synthetic_contigs(n_contigs: int, min_len: int, max_len: int, seed: int = 0) -> list[str]:
    # Stand-in for the FASTA reader; the real job streams contigs from object storage.
    g = torch.Generator().manual_seed(seed)
    contigs = []
    for _ in range(n_contigs):
        n = int(torch.randint(min_len, max_len, (1,), generator=g))
        idx = torch.randint(0, 4, (n,), generator=g)
        contigs.append("".join("ACGT"[i] for i in idx.tolist()))
    return contigs


def packed_windows(contigs, tok: NucleotideTokenizer, window: int):
    """Concatenate contigs (BOS ... EOS) into one stream and cut it into full windows."""
    stream: list[int] = []
    for c in contigs:
        stream.append(tok.bos_id)
        stream.extend(tok.encode(c))
        stream.append(tok.eos_id)
    n_full = len(stream) // window
    return torch.tensor(stream[: n_full * window], dtype=torch.long).view(n_full, window)


def collate(windows: torch.Tensor, pad_id: int):
    # Same collator we use for fine-tuning (tokenizer-style dict).
    return {
        "input_ids": windows,
        "attention_mask": (windows != pad_id).long(),
    }


def batches(windows: torch.Tensor, batch_size: int, pad_id: int):
    for i in range(0, windows.shape[0] - batch_size + 1, batch_size):
        yield collate(windows[i : i + batch_size], pad_id)
