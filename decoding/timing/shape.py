"""The model's shape, counted: what the roofline arithmetic needs to know about the loaded model."""

from dataclasses import dataclass

from decoding.models import LoadedModel


@dataclass(frozen=True)
class ModelShape:
    """What the roofline arithmetic needs to know about a model."""

    body_params: int  # every parameter a token passes through, except the input embedding and the LM head
    head_params: int  # the LM head matrix (the embedding matrix when they are tied)
    layers: int
    q_heads: int
    kv_heads: int
    head_dim: int
    bytes_per_param: int

    @property
    def params_read(self) -> int:
        """Parameters one decode step reads: the body plus the LM head."""
        return self.body_params + self.head_params

    @property
    def weight_bytes(self) -> int:
        return self.params_read * self.bytes_per_param

    @property
    def attn_dim(self) -> int:
        return self.q_heads * self.head_dim


def model_shape(lm: LoadedModel) -> ModelShape:
    """Count the weights a decode step actually reads.

    The input embedding is a lookup: a step reads one row of it per token, not the matrix, so it is
    left out. The LM head is a full matmul over the vocabulary and is read whole. When the two are
    tied (SmolLM2) they are one tensor, counted once, as the LM head read."""
    model, config = lm.model, lm.model.config
    head = model.get_output_embeddings().weight
    embed = model.get_input_embeddings().weight
    skip = {id(head), id(embed)}
    body = sum(p.numel() for p in model.parameters() if id(p) not in skip)
    q_heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // q_heads
    return ModelShape(
        body_params=body,
        head_params=head.numel(),
        layers=config.num_hidden_layers,
        q_heads=q_heads,
        kv_heads=getattr(config, "num_key_value_heads", None) or q_heads,
        head_dim=head_dim,
        bytes_per_param=head.element_size(),
    )
