#!/usr/bin/python3
"""Development probe (not held out): small nets of one family each, measured against the plan.

    /usr/bin/python3 tools/probe_families.py [--oomguard build/oomguard] [--cases a,b] [--work DIR]
                                             [--out bench/results/family_probe.json]
    /usr/bin/python3 tools/probe_families.py --list
    /usr/bin/python3 tools/probe_families.py --cases ws_conv,wn_conv1d --store    # into tests/data/plan

--store copies each case's ONNX to tests/data/plan/family_<case>.onnx and merges its measured rows into
tests/data/plan/family_probes.json (planner_test.cc plans them).

Each case is a small torch.nn net built around one idiom the planner must follow (weight standardisation
in forward, strided 1-D convolutions and transposed convolutions at small batches, dense graph attention's
4-D score tensors, an unrolled convolutional LSTM cell, a residual that subtracts what each block explains,
an EmbeddingBag). Each is exported in training mode (tools/export_zoo.py, opset 14) and each row's real
PyTorch 1.13 CPU step is measured in a fresh process under the LD_PRELOAD tracker (tools/measure_step.py),
then planned with `oomguard plan --target cpu`. The cases are written here, with their own sizes, when a
held-out row of the same family missed (tools/unseen_set3.py): the rule is found on these, not on the row.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name: (inputs [(name, per-sample shape, dtype, high)], classes, label shape, batches, optimizer)
CASES = {
    "ws_conv": ([("input", (16, 24, 24), "float32", 0)], 10, (), (2, 8), "sgd"),
    "ws_conv_big": ([("input", (128, 6, 6), "float32", 0)], 10, (), (1, 4), "sgd"),
    "ws_conv_gn": ([("input", (32, 16, 16), "float32", 0)], 10, (), (2, 8), "momentum"),
    "wn_conv1d": ([("input", (12, 300), "float32", 0)], 4, (), (2, 8), "sgd"),
    "conv1d_s2_k15": ([("input", (8, 2048), "float32", 0)], 3, (1024,), (1, 2, 4), "sgd"),
    "conv1d_s2_only": ([("input", (8, 2048), "float32", 0)], 3, (1024,), (1, 2, 4), "sgd"),
    "instnorm1d": ([("input", (24, 1024), "float32", 0)], 3, (1024,), (1, 2, 4), "sgd"),
    "convt1d_s2": ([("input", (64, 256), "float32", 0)], 3, (512,), (1, 2, 4), "sgd"),
    "unet1d_small": ([("input", (1, 2048), "float32", 0)], 2, (2048,), (1, 2, 3, 4), "sgd"),
    "gat_scores": ([("x", (48, 24), "float32", 0), ("adj", (48, 48), "float32", 0)], 5, (), (2, 8), "sgd"),
    "gat_einsum": ([("x", (48, 24), "float32", 0)], 5, (), (2, 8), "sgd"),
    "convlstm_cell": ([("input", (3, 2, 24, 24), "float32", 0)], 5, (), (2, 4), "sgd"),
    "residual_sub": ([("input", (96,), "float32", 0)], 12, (), (16, 64), "sgd"),
    "bcast_matmul5d": ([("input", (64, 8), "float32", 0)], 5, (), (2, 8), "sgd"),
    "bcast_matmul3d": ([("input", (16, 40), "float32", 0)], 5, (), (2, 8), "sgd"),
    "routing_sum": ([("input", (64, 8), "float32", 0)], 5, (), (2, 8), "sgd"),
    "masked_conv": ([("input", (1, 28, 28), "float32", 0)], 4, (28, 28), (2, 4, 8, 16), "sgd"),
    "masked_conv_res": ([("input", (1, 24, 24), "float32", 0)], 8, (24, 24), (2, 4, 8), "adam"),
    "cbam_gates": ([("input", (24, 20, 20), "float32", 0)], 6, (), (2, 8), "sgd"),
    "reduce_scratch": ([("input", (4, 32, 32), "float32", 0)], 6, (), (2, 8), "sgd"),
    "ln_channels_first": ([("input", (3, 40, 40), "float32", 0)], 5, (), (2, 8), "sgd"),
    "ln_channels_first_plain": ([("input", (3, 40, 40), "float32", 0)], 5, (), (2, 8), "sgd"),
    "pool_heads": ([("input", (32, 16, 16), "float32", 0)], 6, (), (4, 16), "sgd"),
    "gnn_scatter": ([("x", (40, 12), "float32", 0), ("edges", (2, 160), "int64", 40)], 4, (), (4, 16), "sgd"),
    "gnn_scatter_add": ([("x", (40, 12), "float32", 0), ("edges", (2, 160), "int64", 40)], 4, (), (4, 16), "sgd"),
    "einsum_where_attn": ([("input", (40, 48), "float32", 0)], 5, (), (4, 16), "sgd"),
    "repeat_interleave": ([("input", (16, 30), "float32", 0)], 4, (90,), (2, 8), "sgd"),
    "gumbel_codes": ([("input", (1, 24, 24), "float32", 0)], 5, (), (8, 32), "sgd"),
    "embedding_bag": ([("input_ids", (30,), "int64", 5000)], 4, (), (8, 32), "sgd"),
    "conv1d_k15_mid": ([("input", (4, 1536), "float32", 0)], 3, (768,), (1, 2, 4, 8), "sgd"),
    "conv1d_k17_stem": ([("input", (12, 1000), "float32", 0)], 3, (500,), (2, 4, 8), "sgd"),
    "conv2d_k1x15_stem": ([("input", (8, 6, 256), "float32", 0)], 3, (6, 128), (2, 4, 8), "sgd"),
    "conv2d_k3x15_mid": ([("input", (4, 10, 200), "float32", 0)], 3, (8, 100), (2, 4, 8), "sgd"),
    "edge_knn": ([("input", (4, 160), "float32", 0)], 5, (), (2, 8), "sgd"),
    "edge_knn_one": ([("input", (4, 160), "float32", 0)], 5, (), (2, 8), "sgd"),
    "conv1d_k15_wide_mid": ([("input", (4, 2048), "float32", 0)], 3, (1024,), (2, 4, 8), "sgd"),
    "conv1d_k15_wider_mid": ([("input", (4, 1024), "float32", 0)], 3, (512,), (2, 4, 8), "sgd"),
    "conv1d_k15_wide_stem": ([("input", (16, 2048), "float32", 0)], 3, (1024,), (2, 4, 8), "sgd"),
    "conv2d_k1x17_wide_mid": ([("input", (4, 6, 256), "float32", 0)], 3, (6, 128), (2, 4, 8), "sgd"),
    "unet1d_k15": ([("input", (1, 1024), "float32", 0)], 2, (1024,), (2, 4), "sgd"),
    "conv1d_k31_same": ([("input", (4, 1024), "float32", 0)], 3, (1024,), (2, 4, 8), "sgd"),
    "conv1d_k25_same": ([("input", (4, 512), "float32", 0)], 3, (512,), (2, 4, 8), "sgd"),
    "conv1d_k41_same": ([("input", (4, 256), "float32", 0)], 3, (256,), (2, 4, 8), "sgd"),
    "conv1d_k21_same_stem": ([("input", (16, 2048), "float32", 0)], 3, (2048,), (2, 4, 8), "sgd"),
    "conv1d_k25_wide_in_stem": ([("input", (64, 256), "float32", 0)], 3, (256,), (16, 32, 64), "sgd"),
    "sine_coords": ([("input", (200, 2), "float32", 0)], 6, (200,), (2, 4, 8, 16, 32), "adam"),
    "sine_coords_sgd": ([("input", (200, 2), "float32", 0)], 6, (200,), (2, 4, 8, 16, 32), "sgd"),
    "sine_refine": ([("input", (200, 2), "float32", 0)], 6, (200,), (2, 4, 8, 16, 32), "adam"),
    "dense_cat": ([("input", (1536,), "float32", 0)], 5, (), (16, 64), "sgd"),
    "mha_kdim": ([("input", (12, 48), "float32", 0), ("context", (40, 80), "float32", 0)], 5, (), (4, 16, 32), "sgd"),
    "cross_self_layers": ([("input", (12, 48), "float32", 0), ("context", (40, 80), "float32", 0)], 5, (), (4, 16, 32),
                          "momentum"),
    "grad_sum_heads": ([("input", (40,), "float32", 0)], 5, (), (16, 64), "sgd"),
    "bce_logits_aux": ([("input", (48,), "float32", 0)], 5, (), (32, 128), "sgd"),
    "sqerr_aux": ([("input", (48,), "float32", 0)], 5, (), (32, 128), "sgd"),
    # Unseen set 9's misses, at sizes of their own: torchvision's FrozenBatchNorm2d (weight, bias and
    # statistics registered as buffers) and a log-mel front end whose DFT filters and mel matrix are buffers.
    "frozen_bn_cnn": ([("input", (3, 40, 40), "float32", 0)], 7, (), (2, 6), "adam"),
    "frozen_bn_cnn_sgd": ([("input", (3, 40, 40), "float32", 0)], 7, (), (2, 6), "sgd"),
    "buffer_dft_mel": ([("input", (1, 6000), "float32", 0)], 5, (), (3, 12), "sgd"),
    # Not stored, not fixed: -1.9 % at batch 12 (forward peak), exact at batch 3. The front end's tensors need
    # no gradient (input and filters are buffers), so autograd keeps none of them, but forward's Python locals
    # (spec, m) hold them until it returns (step_profile frees exactly spec + m after the last module); the
    # export cannot say which tensors forward names. Extending the locals risk to the root's own no-grad
    # tensors bounded it (plan + risk >= measured) but also gave DGCNN's kNN probe a risk and stopped its
    # batch recording from replaying; dropped for lack of time.
    "logmel_bn_cnn": ([("input", (1, 6000), "float32", 0)], 5, (), (3, 12), "adam"),
    # Fine-tuning with frozen parameters (requires_grad=False), planned with the export's "oomguard.frozen"
    # metadata (written here as oomguard.export writes it) or `--frozen`: a CNN whose first two conv blocks
    # are frozen, a Linear stack with LoRA adapters (base weights frozen), a frozen embedding + trained head.
    "frozen_stem_cnn": ([("input", (3, 32, 32), "float32", 0)], 7, (), (2, 8), "adam"),
    "frozen_stem_cnn_sgd": ([("input", (3, 32, 32), "float32", 0)], 7, (), (2, 8), "sgd"),
    "lora_mlp": ([("input", (256,), "float32", 0)], 10, (), (16, 64), "adam"),
    "frozen_embed_head": ([("input_ids", (30,), "int64", 5000)], 4, (), (8, 32), "sgd"),
    # Unseen set 10's misses, at sizes of their own: linear attention's elu + 1 feature maps on head views,
    # a mixture log-density over a broadcast grid (logsumexp), efficient attention with strided-conv keys and a
    # Mix-FFN, an involution on F.unfold patches.
    "elu_feature_attn": ([("input", (40, 48), "float32", 0)], 5, (), (4, 16), "sgd"),
    "mixture_logsumexp": ([("input", (12,), "float32", 0)], 20, (), (32, 128), "sgd"),
    "sr_attention_mixffn": ([("input", (3, 32, 32), "float32", 0)], 5, (), (2, 8), "sgd"),
    "unfold_involution": ([("input", (16, 20, 20), "float32", 0)], 5, (), (2, 8), "sgd"),
    "token_depthwise_ffn": ([("input", (144, 40), "float32", 0)], 5, (), (2, 8), "adam"),
    "einsum_chunk_heads": ([("input", (64, 48), "float32", 0)], 5, (), (2, 8), "sgd"),
    # Pieces of one projection reshaped again (issue 11, tools/view_layouts.py): qkv viewed as [B, T, 3, d], each
    # piece selected and folded to [B * T, d] (views in torch: the rows keep their 3d gaps), and chunks viewed per
    # head then folded to [B, T * d] (copies: the gaps cannot merge), each kept for backward.
    "select_fold_views": ([("input", (32, 48), "float32", 0)], 5, (), (2, 8), "sgd"),
    "chunk_fold_copy": ([("input", (32, 48), "float32", 0)], 5, (), (2, 8), "sgd"),
    # Unseen set 9's ALBERT family (planned +3.2 / +6.8 % with its locals held), sizes of its own: a factorized
    # embedding, one encoder layer (q, k, v chunks of one projection viewed per head) called three times.
    "shared_layer_chunks": ([("input", (32, 24), "float32", 0)], 5, (), (2, 8), "sgd"),
    # Unseen set 11's misses, at sizes of their own: a VQ bottleneck with a straight-through estimator
    # (argmin over codebook distances, .detach()), minGRU's parallel form (cumsum of log gates), a TFT-style
    # variable selection (per-variable GRNs stacked and weighted by a softmax over variables).
    "vq_straight_through": ([("input", (1, 24, 24), "float32", 0)], 3, (24, 24), (2, 8), "sgd"),
    "cumsum_gates": ([("input", (40, 12), "float32", 0)], 4, (), (4, 16), "sgd"),
    "variable_selection_grn": ([("input", (16, 5), "float32", 0)], 3, (), (16, 64), "adam"),
    # DETR's decoder: sequence-first nn.MultiheadAttention with attention dropout, learned queries plus a
    # position added to queries and keys (q is k, v another tensor), cross-attention to a memory.
    "mha_dropout_queries": ([("input", (36, 32), "float32", 0)], 4, (12,), (2, 8), "sgd"),
    "detr_memory_pos": ([("input", (8, 12, 12), "float32", 0)], 4, (10,), (2, 8), "sgd"),
    # TFT's temporal part: an LSTM, a GLU-gated skip with LayerNorm, attention whose one value head is shared by
    # all heads (heads averaged), the last step's features.
    "lstm_shared_value_attn": ([("input", (20, 24), "float32", 0)], 3, (), (16, 64), "adam"),
    # minGRU layers whole (LayerNorm, the parallel form, a residual, a LayerNorm GELU MLP), two of them.
    "mingru_layers": ([("input", (30, 10), "float32", 0)], 4, (), (8, 32), "sgd"),
    # Unseen set 12's families, at sizes of their own: RevIN statistics (detached), channel independence by
    # reshape, patches, a BatchNorm1d encoder over transposed tokens, a de-normalised forecast read per step.
    "revin_patch_bn": ([("input", (40, 5), "float32", 0)], 5, (10,), (4, 16), "sgd"),
    # The same with PatchTST's encoder whole: multi-head attention and a GELU / Dropout MLP, each residual followed
    # by a BatchNorm1d over the transposed tokens, two layers.
    "patch_bn_encoder": ([("input", (48, 4), "float32", 0)], 4, (12,), (4, 16), "sgd"),
    # Fixed positions picked by a boolean mask buffer (h[:, mask], ids[:, mask] = ...): ELECTRA-style replacement.
    "bool_mask_positions": ([("input_ids", (30,), "int64", 300)], 2, (30,), (4, 16), "sgd"),
    # Two views through one CNN encoder, the second's features detached (MoCo / BYOL-style keys), a negative queue
    # buffer, logits cat([q . k, q @ queue]).
    "detached_key_queue": ([("input", (3, 24, 24), "float32", 0), ("input2", (3, 24, 24), "float32", 0)], 33, (),
                           (4, 16), "sgd"),
    # DeBERTa's content-to-position scores: q @ rel^T gathered along the last dim by a relative index buffer
    # expanded over batch and heads (torch.gather(s, -1, idx.expand(b, h, t, t))).
    "gather_expanded_index": ([("input", (20, 24), "float32", 0)], 3, (), (4, 16), "sgd"),
    # Oblivious trees: sparsemax over features (sort, cumsum), clamped choices, leaf products (prod over depth).
    "sparsemax_trees": ([("input", (12,), "float32", 0)], 3, (), (32, 128), "sgd"),
    # Knowledge distillation: a wider teacher CNN whose logits are .detach()'d (its parameters get no gradient)
    # beside a small student, the temperature-scaled KL added to the student's logits.
    "detached_teacher": ([("input", (3, 20, 20), "float32", 0)], 6, (), (4, 16), "sgd"),
    # The same teacher under torch.no_grad(), and a MoCo-style key encoder under no_grad beside its query
    # encoder (adam: the key encoder's weights get no state). Planned with "oomguard.no_grad" /
    # "oomguard.detached" as oomguard.export writes them (GRAD_MODE below).
    "nograd_teacher": ([("input", (3, 20, 20), "float32", 0)], 6, (), (4, 16), "sgd"),
    "momentum_key_encoder": ([("input", (3, 24, 24), "float32", 0)], 8, (), (4, 16), "adam"),
    # nn.MultiheadAttention under torch.no_grad() in a forward (BLIP-2's frozen-style ViT, unseen set 17's Q-Former):
    # torch 1.13's F.multi_head_attention_forward binds q, k, v and the scaled q, freed only when it returns.
    "mha_nograd": ([("input", (64, 32), "float32", 0)], 6, (), (4, 16), "sgd"),
    # SwAV-style codes computed in the root's own forward under torch.no_grad() (no module of their own): scores
    # of normalised features against many prototypes, a sharpened softmax and two normalisations as targets; the
    # same prototypes scored again with grad for the swapped prediction. Found by grad_mode's second export.
    "root_nograd_codes": ([("input", (3, 24, 24), "float32", 0)], 8, (), (4, 16), "adam"),
    # Unseen set 14's NTM family, sizes of its own: content addressing of a [B, M, W] memory by
    # F.cosine_similarity(mem, key.unsqueeze(1), dim=-1) (a broadcast key), softmax weights, reads and additive
    # writes over a few steps; and cosine of a conv feature map against class prototypes along channels
    # (dim=1 of [B, C, H, W] against [1, C, 1, 1]).
    "cosine_memory": ([("input", (5, 10), "float32", 0)], 4, (), (4, 16), "sgd"),
    "cosine_prototypes": ([("input", (3, 16, 16), "float32", 0)], 5, (), (2, 8), "sgd"),
    # Unseen set 13's Conv-TasNet family, sizes of its own: a strided Conv1d encoder, global layer norm by hand
    # (mean / var over C and T), 1x1 + PReLU + gLN + dilated depthwise Conv1d + PReLU + gLN blocks with residual
    # and skip 1x1s, sigmoid masks over 2 sources, a ConvTranspose1d decoder.
    "tasnet_gln_blocks": ([("input", (1, 2400), "float32", 0)], 2, (2400,), (2, 8), "sgd"),
    # Unseen set 12's NODE rows, closer than sparsemax_trees: a learned temperature (f - thr) * exp(-log_temp),
    # BatchNorm1d on the input, two ODST layers (the second over cat([x, h1])), the heads concatenated.
    "node_temp_trees": ([("input", (10,), "float32", 0)], 3, (), (32, 128), "sgd"),
    # Unseen set 14's BlurPool family, sizes of its own: conv + BN + ReLU, then a fixed binomial filter (a buffer,
    # no gradient) applied depthwise with stride 2 after a reflect pad; max pool stride 1 before the first blur.
    "blur_depthwise_buffer": ([("input", (3, 40, 40), "float32", 0)], 6, (), (2, 8), "momentum"),
    # Unseen set 14's PointNet++ family, sizes of its own: farthest point sampling under no_grad, kNN by topk with
    # the radius fallback (torch.where), gather grouping into [B, m, k, C], a shared 1x1 Conv2d MLP, max over k.
    "pointnet_grouping": ([("input", (256, 3), "float32", 0)], 4, (), (4, 16), "sgd"),
    # Unseen set 14's GATv2 family, sizes of its own: index_select of source / target projections by an edge-index
    # buffer, projected edge features, leaky ReLU, a per-edge softmax (exp over a detached amax, index_add
    # denominators), index_add aggregation, ELU.
    "gatv2_index_softmax": ([("x", (40, 12), "float32", 0), ("e", (160, 6), "float32", 0)], 4, (), (4, 16), "sgd"),
    # In-place activations written as calls in forward, which no module's inplace=True shows: torchvision-style
    # basic blocks with F.relu(x, inplace=True) after the residual add, the stem's in the root's own forward and
    # one block called twice; a DCGAN-style discriminator with x.relu_(), F.leaky_relu_(x, 0.2) and
    # F.hardtanh_ in the root and in a block called twice; an MLP with F.elu(inplace=True) in the root,
    # F.leaky_relu(inplace=True) in a block called twice and F.silu(inplace=True) before the head. Planned with
    # "oomguard.inplace" as oomguard.export writes it (the eager calls matched to their nodes,
    # python/oomguard/inplace.py) and the plain export beside.
    "fn_relu_resblocks": ([("input", (3, 32, 32), "float32", 0)], 10, (), (2, 8), "sgd"),
    "method_inplace_disc": ([("input", (3, 32, 32), "float32", 0)], 2, (), (4, 16), "adam"),
    "fn_act_mlp": ([("input", (64,), "float32", 0)], 10, (), (16, 64), "sgd"),
    # Values .detach()ed in a forward that no module returns (issue 11), planned with "oomguard.detached" /
    # "oomguard.no_grad" as oomguard.export writes them (grad_mode's second export marks each .detach()): VQ-VAE's
    # straight-through z + (q - z).detach() with its codebook losses; a BYOL-style target computed as an
    # expression, normalize(gelu(h @ w1) @ w2).detach() (w1, w2 get no gradient); SimSiam's stop-gradient on the
    # projections, which the predictors also read (nothing named but what F.cosine_similarity does to the
    # detached alias).
    "detach_vq_codes": ([("input", (1, 32, 32), "float32", 0)], 3, (32, 32), (2, 8), "sgd"),
    "detach_target_expr": ([("input", (128,), "float32", 0)], 10, (), (32, 128), "adam"),
    "stopgrad_predictor": ([("input", (3, 24, 24), "float32", 0)], 6, (), (4, 16), "sgd"),
    # Gradient checkpointing (issue 11): blocks run through torch.utils.checkpoint.checkpoint, which keeps each
    # call's inputs through forward and recomputes its activations when backward reaches it; the ONNX file is the
    # plain forward. Planned with "oomguard.checkpointed" as oomguard.export writes it (python/oomguard/
    # checkpoint.py; CHECKPOINTED below): an MLP stack of residual GELU blocks, post-norm transformer blocks, conv
    # + BN + ReLU blocks, each with use_reentrant=False and True (which torch 1.13 exports only through
    # oomguard's patch: the plain file is then exported the same way), and checkpoint_sequential.
    "ckpt_mlp": ([("input", (256,), "float32", 0)], 10, (), (256, 1024), "sgd"),
    "ckpt_mlp_reentrant": ([("input", (256,), "float32", 0)], 10, (), (256, 1024), "sgd"),
    "ckpt_transformer": ([("input", (48, 64), "float32", 0)], 5, (), (4, 16), "adam"),
    "ckpt_transformer_reentrant": ([("input", (48, 64), "float32", 0)], 5, (), (4, 16), "adam"),
    "ckpt_conv": ([("input", (16, 24, 24), "float32", 0)], 6, (), (2, 8), "sgd"),
    "ckpt_conv_reentrant": ([("input", (16, 24, 24), "float32", 0)], 6, (), (2, 8), "sgd"),
    "ckpt_sequential": ([("input", (256,), "float32", 0)], 10, (), (256, 1024), "sgd"),
}

# The cases whose files carry what oomguard.export finds by running forward once (python/oomguard/grad_mode.py,
# inplace.py): the plain export is planned beside them, and the plain export with --no-grad / --detached.
GRAD_MODE = {
    "detached_teacher": ["--detached", "/teacher/*", "--inplace", "all"],
    "nograd_teacher": ["--no-grad", "/teacher/*", "--inplace", "all"],
    "momentum_key_encoder": ["--no-grad", "/key/*"],  # (its queue buffer is a parameter to the plain file)
    "mha_nograd": ["--no-grad", "/attn/*"],
    "root_nograd_codes": ["--no-grad", "/MatMul,/Div_1,/Softmax,/ReduceSum,/Div_2,/ReduceSum_1,/Div_3"],
    "fn_relu_resblocks": ["--inplace", "all"],  # every activation of these three runs in place
    "method_inplace_disc": ["--inplace", "all"],
    "fn_act_mlp": ["--inplace", "all"],
    "detach_vq_codes": ["--detached", "/Sub_3"],
    "detach_target_expr": ["--detached", "/MatMul,/Div,/Erf,/Add,/Mul,/Mul_1,/MatMul_1,/ReduceL2,/Clip,/Expand,/Div_1"],
    "stopgrad_predictor": ["--no-grad", "/Mul_2,/ReduceSum_2,/Mul_6,/ReduceSum_5"],
}

# The gradient-checkpointed cases: each file carries "oomguard.checkpointed" as oomguard.export writes it; the plain
# export is planned beside it ("plain"), and with --checkpointed, one segment per block ("flag").
CHECKPOINTED = {
    "ckpt_mlp": ["--checkpointed", "/blocks.0/*;/blocks.1/*;/blocks.2/*;/blocks.3/*"],
    "ckpt_mlp_reentrant": ["--checkpointed", "/blocks.0/*;/blocks.1/*;/blocks.2/*;/blocks.3/*"],
    "ckpt_transformer": ["--checkpointed", "/blocks.0/*;/blocks.1/*;/blocks.2/*"],
    "ckpt_transformer_reentrant": ["--checkpointed", "/blocks.0/*;/blocks.1/*;/blocks.2/*"],
    "ckpt_conv": ["--checkpointed", "/blocks.0/*;/blocks.1/*;/blocks.2/*"],
    "ckpt_conv_reentrant": ["--checkpointed", "/blocks.0/*;/blocks.1/*;/blocks.2/*"],
    "ckpt_sequential": ["--checkpointed", "/body.0/*,/body.1/*;/body.2/*,/body.3/*"],
}

# The cases whose forwards hold values in names until they return: each is planned beside as the plain export
# with "oomguard.locals" as oomguard.export writes it (python/oomguard/frame_locals.py), the "locals" variant;
# --store keeps that file as tests/data/plan/family_<case>_locals.onnx.
LOCALS = ("einsum_chunk_heads", "elu_feature_attn", "vq_straight_through", "gumbel_codes", "shared_layer_chunks")

# The cases whose parameters are frozen, and which (prefixes of their names, `--frozen` patterns).
FROZEN = {
    "frozen_stem_cnn": ["0.*", "1.*", "3.*", "4.*"],
    "frozen_stem_cnn_sgd": ["0.*", "1.*", "3.*", "4.*"],
    "lora_mlp": ["*.base.*"],
    "frozen_embed_head": ["embed.*"],
}


def freeze(module, patterns):
    import fnmatch
    for n, p in module.named_parameters():
        if any(fnmatch.fnmatchcase(n, pat) for pat in patterns):
            p.requires_grad_(False)
    return module


def build(name: str, classes: int):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class WsConv(nn.Conv2d):
        def forward(self, x):
            var, mean = torch.var_mean(self.weight, dim=[1, 2, 3], keepdim=True, unbiased=False)
            w = (self.weight - mean) / torch.sqrt(var + 1e-10)
            return F.conv2d(x, w, self.bias, self.stride, self.padding, self.dilation, self.groups)

    class MaskedConv(nn.Conv2d):  # PixelCNN's: the rows below the centre masked by a registered buffer
        def __init__(self, cin, cout, k):
            super().__init__(cin, cout, k, padding=k // 2)
            mask = torch.ones(cout, cin, k, k)
            mask[:, :, k // 2 + 1:] = 0
            self.register_buffer("mask", mask)

        def forward(self, x):
            return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)

    if name == "ws_conv":
        return nn.Sequential(WsConv(16, 48, 3, padding=1, bias=False), nn.ReLU(), WsConv(48, 48, 3, padding=1),
                             nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(48, classes))
    if name == "ws_conv_big":
        return nn.Sequential(WsConv(128, 256, 3, padding=1, bias=False), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                             nn.Flatten(), nn.Linear(256, classes))
    if name == "ws_conv_gn":
        return nn.Sequential(nn.GroupNorm(8, 32), nn.ReLU(), WsConv(32, 64, 1, bias=False), nn.GroupNorm(8, 64),
                             nn.ReLU(), WsConv(64, 64, 3, padding=1, bias=False), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                             nn.Linear(64, classes))
    if name == "wn_conv1d":
        from torch.nn.utils import weight_norm
        return nn.Sequential(weight_norm(nn.Conv1d(12, 40, 5, padding=2)), nn.ReLU(),
                             weight_norm(nn.Conv1d(40, 40, 3, padding=1)), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
                             nn.Flatten(), nn.Linear(40, classes))
    if name == "conv1d_s2_k15":
        return nn.Sequential(nn.Conv1d(8, 24, 15, stride=2, padding=7), nn.InstanceNorm1d(24, affine=True),
                             nn.LeakyReLU(0.2), nn.Conv1d(24, classes, 1))
    if name == "conv1d_s2_only":
        return nn.Sequential(nn.Conv1d(8, 24, 15, stride=2, padding=7), nn.Conv1d(24, classes, 1))
    if name == "instnorm1d":
        return nn.Sequential(nn.Conv1d(24, 24, 1), nn.InstanceNorm1d(24, affine=True), nn.LeakyReLU(0.2),
                             nn.Conv1d(24, classes, 1))
    if name == "convt1d_s2":
        return nn.Sequential(nn.ConvTranspose1d(64, 32, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                             nn.Conv1d(32, classes, 1))
    if name == "unet1d_small":
        class Unet(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Conv1d(1, 8, 7, padding=3)
                self.d1 = nn.Sequential(nn.Conv1d(8, 16, 15, stride=2, padding=7), nn.InstanceNorm1d(16, affine=True),
                                        nn.LeakyReLU(0.2))
                self.d2 = nn.Sequential(nn.Conv1d(16, 32, 15, stride=2, padding=7), nn.InstanceNorm1d(32, affine=True),
                                        nn.LeakyReLU(0.2))
                self.u2 = nn.ConvTranspose1d(32, 16, 4, stride=2, padding=1)
                self.c2 = nn.Sequential(nn.Conv1d(32, 16, 5, padding=2), nn.InstanceNorm1d(16, affine=True),
                                        nn.LeakyReLU(0.2))
                self.u1 = nn.ConvTranspose1d(16, 8, 4, stride=2, padding=1)
                self.c1 = nn.Sequential(nn.Conv1d(16, 8, 5, padding=2), nn.InstanceNorm1d(8, affine=True),
                                        nn.LeakyReLU(0.2))
                self.out = nn.Conv1d(8, classes, 1)

            def forward(self, x):
                h0 = self.inp(x)
                h1 = self.d1(h0)
                h2 = self.d2(h1)
                y = self.c2(torch.cat([self.u2(h2), h1], dim=1))
                y = self.c1(torch.cat([self.u1(y), h0], dim=1))
                return self.out(y)
        return Unet()
    if name in ("gat_scores", "gat_einsum"):
        scores = name == "gat_scores"

        class Gat(nn.Module):
            def __init__(self, heads=3, fout=8):
                super().__init__()
                self.heads, self.fout = heads, fout
                self.w = nn.Linear(24, heads * fout, bias=False)
                self.a_src = nn.Parameter(torch.randn(heads, fout) * 0.1)
                self.a_dst = nn.Parameter(torch.randn(heads, fout) * 0.1)
                self.drop = nn.Dropout(0.25)
                self.fc = nn.Linear(heads * fout, classes)

            def forward(self, x, adj=None):
                b, n, _ = x.shape
                h = self.w(x).view(b, n, self.heads, self.fout)
                src = (h * self.a_src).sum(-1)
                dst = (h * self.a_dst).sum(-1)
                e = F.leaky_relu(src.unsqueeze(2) + dst.unsqueeze(1), 0.2)  # [B, N, N, H]
                if scores:
                    e = e.masked_fill((adj <= 0).unsqueeze(-1), -1e9)
                att = self.drop(torch.softmax(e, dim=2))
                out = torch.einsum("bijh,bjhf->bihf", att, h)
                return self.fc(out.reshape(b, n, -1).mean(dim=1))
        return Gat()
    if name == "convlstm_cell":
        class Cell(nn.Module):
            def __init__(self, hid=24):
                super().__init__()
                self.hid = hid
                self.gates = nn.Conv2d(2 + hid, 4 * hid, 3, padding=1)
                self.fc = nn.Linear(hid, classes)

            def forward(self, x):
                b, t, _, hh, ww = x.shape
                h = x.new_zeros(b, self.hid, hh, ww)
                c = x.new_zeros(b, self.hid, hh, ww)
                for i in range(t):
                    i_g, f_g, o_g, g_g = self.gates(torch.cat([x[:, i], h], dim=1)).chunk(4, dim=1)
                    c = torch.sigmoid(f_g) * c + torch.sigmoid(i_g) * torch.tanh(g_g)
                    h = torch.sigmoid(o_g) * torch.tanh(c)
                return self.fc(h.mean(dim=(2, 3)))
        return Cell()
    if name == "residual_sub":
        class Sub(nn.Module):
            def __init__(self, width=256):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(96, width), nn.ReLU(), nn.Linear(width, width),
                                                           nn.ReLU()) for _ in range(3)])
                self.back = nn.ModuleList([nn.Linear(width, 96) for _ in range(3)])
                self.fore = nn.ModuleList([nn.Linear(width, classes) for _ in range(3)])

            def forward(self, x):
                residual, forecast = x, 0
                for blk, bk, fc in zip(self.blocks, self.back, self.fore):
                    h = blk(residual)
                    residual = residual - bk(h)
                    forecast = forecast + fc(h)
                return forecast
        return Sub()
    if name in ("bcast_matmul5d", "routing_sum"):
        class Caps(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(8, 8)
                self.W = nn.Parameter(torch.randn(1, 64, classes, 12, 8) * 0.05)

            def forward(self, x):
                u = self.lin(x)
                u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)  # [B, 64, C, 12]
                if name == "routing_sum":
                    c = torch.softmax(torch.zeros(u_hat.shape[:3], device=x.device) + u_hat.mean(-1), dim=2)
                    v = (c.unsqueeze(-1) * u_hat).sum(dim=1)  # [B, C, 12]
                    return (v * v).sum(-1)
                return u_hat.sum(dim=(1, 3))
        return Caps()
    if name == "bcast_matmul3d":
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.W = nn.Parameter(torch.randn(1, 24, 16) * 0.05)
                self.fc = nn.Linear(24 * 40, classes)

            def forward(self, x):
                return self.fc((self.W @ x).flatten(1))
        return M()
    if name == "masked_conv_res":
        class Res(nn.Module):
            def __init__(self):
                super().__init__()
                self.first = MaskedConv(1, 48, 7)
                self.layers = nn.ModuleList([MaskedConv(48, 48, 3) for _ in range(4)])
                self.out = nn.Sequential(nn.ReLU(), nn.Conv2d(48, 48, 1), nn.ReLU(), nn.Conv2d(48, classes, 1))

            def forward(self, x):
                x = self.first(x)
                for layer in self.layers:
                    x = x + layer(F.relu(x))
                return self.out(x)
        return Res()
    if name == "masked_conv":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.first = MaskedConv(1, 48, 7)
                self.second = MaskedConv(48, 48, 3)
                self.out = nn.Conv2d(48, classes, 1)

            def forward(self, x):
                x = self.first(x)
                return self.out(F.relu(x + self.second(F.relu(x))))
        return Net()
    if name == "cbam_gates":
        class Cbam(nn.Module):
            def __init__(self, c=48):
                super().__init__()
                self.conv = nn.Conv2d(24, c, 3, padding=1)
                self.mlp = nn.Sequential(nn.Linear(c, c // 4), nn.ReLU(), nn.Linear(c // 4, c))
                self.spatial = nn.Conv2d(2, 1, 7, padding=3)
                self.fc = nn.Linear(c, classes)

            def forward(self, x):
                x = self.conv(x)
                ca = torch.sigmoid(self.mlp(x.mean(dim=(2, 3))) + self.mlp(x.amax(dim=(2, 3))))
                x = x * ca[:, :, None, None]
                sa = torch.sigmoid(self.spatial(torch.cat([x.mean(dim=1, keepdim=True),
                                                           x.amax(dim=1, keepdim=True)], dim=1)))
                return self.fc((x * sa).mean(dim=(2, 3)))
        return Cbam()
    if name == "reduce_scratch":
        class Reduce(nn.Module):  # reductions whose backward builds input-sized temporaries
            def __init__(self, c=256):
                super().__init__()
                self.conv = nn.Conv2d(4, c, 1)
                self.fc = nn.Linear(1, classes)

            def forward(self, x):
                a = torch.logsumexp(self.conv(x), dim=1, keepdim=True)  # ReduceLogSumExp: 2 x its input
                return self.fc(a.mean(dim=(2, 3)))
        return Reduce()
    if name in ("ln_channels_first", "ln_channels_first_plain"):
        plain = name.endswith("plain")
        class LnConv(nn.Module):  # ConvNeXt-style: LayerNorm over channels by permuting around it
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.conv = nn.Conv2d(cin, cout, 3, stride=stride, padding=1)
                self.norm = nn.LayerNorm(cout)

            def forward(self, x):
                if plain:  # the same convolutions without the permuted LayerNorm
                    return F.gelu(self.conv(x))
                return F.gelu(self.norm(self.conv(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(LnConv(3, 24, 2), LnConv(24, 24, 1), LnConv(24, 48, 2), LnConv(48, 48, 1),
                                          LnConv(48, 96, 2))
                self.fc = nn.Linear(96, classes)

            def forward(self, x):
                return self.fc(self.body(x).mean(dim=(2, 3)))
        return Net()
    if name == "pool_heads":
        class Heads(nn.Module):  # adaptive max and LP pooling heads concatenated
            def __init__(self, c=48):
                super().__init__()
                self.conv = nn.Conv2d(32, c, 3, padding=1)
                self.maxp = nn.AdaptiveMaxPool2d(2)
                self.lpp = nn.LPPool2d(2, 4)
                self.fc = nn.Linear(c * 4 + c * 16, classes)

            def forward(self, x):
                h = F.relu(self.conv(x))
                return self.fc(torch.cat([self.maxp(h).flatten(1), self.lpp(h).flatten(1)], 1))
        return Heads()
    if name in ("gnn_scatter", "gnn_scatter_add"):
        class Gnn(nn.Module):  # message passing: gather sources, a Linear message, sum into destinations
            def __init__(self, d=48):
                super().__init__()
                self.inp = nn.Linear(12, d)
                self.msg = nn.Linear(d, d)
                self.upd = nn.Linear(2 * d, d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x, edges):
                b, n, _ = x.shape
                h = self.inp(x).reshape(b * n, -1)
                offset = (torch.arange(b, device=x.device) * n).view(b, 1, 1)
                e = (edges + offset).permute(1, 0, 2).reshape(2, -1)
                for _ in range(2):
                    m = F.relu(self.msg(h.index_select(0, e[0])))
                    if name == "gnn_scatter":
                        agg = torch.zeros_like(h).index_add(0, e[1], m)
                    else:
                        agg = torch.zeros_like(h).scatter_add(0, e[1].unsqueeze(1).expand(-1, m.shape[1]), m)
                    h = F.relu(self.upd(torch.cat([h, agg], dim=1)))
                return self.fc(h.view(b, n, -1).mean(dim=1))
        return Gnn()
    if name == "einsum_where_attn":
        class Attn(nn.Module):  # attention written with einsum and a torch.where band mask
            def __init__(self, d=48, heads=3, t=40):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                idx = torch.arange(t)
                self.register_buffer("band", ((idx[None, :] - idx[:, None]).abs() <= 6).float(), persistent=False)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(x).view(b, t, 3, self.heads, -1).unbind(dim=2)
                s = torch.einsum("bqhd,bkhd->bhqk", q, k) / (d // self.heads) ** 0.5
                s = torch.where(self.band > 0, s, torch.full_like(s, -1e4))
                y = torch.einsum("bhqk,bkhd->bqhd", s.softmax(-1), v).reshape(b, t, d)
                return self.fc((x + self.o(y)).mean(dim=1))
        return Attn()
    if name == "repeat_interleave":
        class Up(nn.Module):  # torch.repeat_interleave along time (exported as Expand / Split / Concat of its repeats)
            def __init__(self):
                super().__init__()
                self.enc = nn.Conv1d(16, 32, 3, padding=1)
                self.dec = nn.Conv1d(32, classes, 3, padding=1)

            def forward(self, x):
                return self.dec(F.relu(self.enc(x)).repeat_interleave(3, dim=2))
        return Up()
    if name == "gumbel_codes":
        class Codes(nn.Module):  # Gumbel-softmax over a code axis, then a codebook einsum
            def __init__(self, codes=48, d=24):
                super().__init__()
                self.enc = nn.Conv2d(1, codes, 4, 2, 1)
                self.codebook = nn.Parameter(torch.randn(codes, d) * 0.1)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                logits = self.enc(x)
                u = torch.rand_like(logits).clamp(1e-6, 1 - 1e-6)
                y = torch.softmax((logits - torch.log(-torch.log(u))) / 0.5, dim=1)
                z = torch.einsum("bchw,cd->bdhw", y, self.codebook)
                return self.fc(z.mean(dim=(2, 3)))
        return Codes()
    if name == "conv1d_k15_mid":  # the strided wide-kernel layer with an input gradient
        return nn.Sequential(nn.Conv1d(4, 10, 3, padding=1), nn.Conv1d(10, 24, 15, stride=2, padding=7),
                             nn.Conv1d(24, classes, 1))
    if name == "conv1d_k17_stem":
        return nn.Sequential(nn.Conv1d(12, 32, 17, stride=2, padding=8), nn.ReLU(), nn.Conv1d(32, classes, 1))
    if name == "conv2d_k1x15_stem":
        return nn.Sequential(nn.Conv2d(8, 20, (1, 15), stride=(1, 2), padding=(0, 7)), nn.Conv2d(20, classes, 1))
    if name == "conv2d_k3x15_mid":
        return nn.Sequential(nn.Conv2d(4, 6, 3, padding=1), nn.Conv2d(6, 16, (3, 15), stride=(1, 2), padding=(0, 7)),
                             nn.Conv2d(16, classes, 1))
    if name == "conv1d_k15_wide_mid":  # 16+ input channels under a kernel wider than 14
        return nn.Sequential(nn.Conv1d(4, 16, 3, padding=1), nn.Conv1d(16, 32, 15, stride=2, padding=7),
                             nn.Conv1d(32, classes, 1))
    if name == "conv1d_k15_wider_mid":
        return nn.Sequential(nn.Conv1d(4, 32, 3, padding=1), nn.Conv1d(32, 64, 15, stride=2, padding=7),
                             nn.Conv1d(64, classes, 1))
    if name == "conv1d_k15_wide_stem":
        return nn.Sequential(nn.Conv1d(16, 32, 15, stride=2, padding=7), nn.Conv1d(32, classes, 1))
    if name == "conv2d_k1x17_wide_mid":
        return nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.Conv2d(16, 24, (1, 17), stride=(1, 2), padding=(0, 8)),
                             nn.Conv2d(24, classes, 1))
    if name == "conv1d_k31_same":  # a 'same'-padded kernel oneDNN's direct forward refuses (code size)
        return nn.Sequential(nn.Conv1d(4, 16, 3, padding=1), nn.Conv1d(16, 32, 31, padding=15),
                             nn.Conv1d(32, classes, 1))
    if name == "conv1d_k25_same":
        return nn.Sequential(nn.Conv1d(4, 32, 3, padding=1), nn.Conv1d(32, 32, 25, padding=12),
                             nn.Conv1d(32, classes, 1))
    if name == "conv1d_k41_same":
        return nn.Sequential(nn.Conv1d(4, 64, 3, padding=1), nn.Conv1d(64, 64, 41, padding=20),
                             nn.Conv1d(64, classes, 1))
    if name == "conv1d_k21_same_stem":  # no input gradient
        return nn.Sequential(nn.Conv1d(16, 32, 21, padding=10), nn.Conv1d(32, classes, 1))
    if name == "conv1d_k25_wide_in_stem":  # the refused forward's input reorder would be the peak
        return nn.Sequential(nn.Conv1d(64, 16, 25, padding=12), nn.ReLU(), nn.Conv1d(16, classes, 1))
    if name == "unet1d_k15":
        class Down(nn.Sequential):
            def __init__(self, cin, cout):
                super().__init__(nn.Conv1d(cin, cout, 15, stride=2, padding=7), nn.InstanceNorm1d(cout, affine=True),
                                 nn.LeakyReLU(0.2))

        class Unet(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Conv1d(1, 16, 7, padding=3)
                self.d1, self.d2 = Down(16, 32), Down(32, 64)
                self.u2 = nn.ConvTranspose1d(64, 32, 4, stride=2, padding=1)
                self.c2 = nn.Sequential(nn.Conv1d(64, 32, 5, padding=2), nn.LeakyReLU(0.2))
                self.u1 = nn.ConvTranspose1d(32, 16, 4, stride=2, padding=1)
                self.c1 = nn.Sequential(nn.Conv1d(32, 16, 5, padding=2), nn.LeakyReLU(0.2))
                self.out = nn.Conv1d(16, classes, 1)

            def forward(self, x):
                h0 = self.inp(x)
                h1 = self.d1(h0)
                h = self.c2(torch.cat([self.u2(self.d2(h1)), h1], dim=1))
                return self.out(self.c1(torch.cat([self.u1(h), h0], dim=1)))
        return Unet()
    if name in ("edge_knn", "edge_knn_one"):  # DGCNN-style edge convolution over k nearest neighbours
        def edges(x, k):
            b, c, n = x.shape
            d = (x * x).sum(dim=1, keepdim=True)
            dist = -d - (-2 * torch.matmul(x.transpose(2, 1), x)) - d.transpose(2, 1)
            idx = dist.topk(k=k, dim=-1)[1]
            flat = (idx + (torch.arange(b) * n).view(-1, 1, 1)).view(-1)
            nb = x.transpose(2, 1).reshape(b * n, c)[flat].view(b, n, k, c)
            center = x.transpose(2, 1).unsqueeze(2).expand(-1, -1, k, -1)
            return torch.cat([nb - center, center], dim=3).permute(0, 3, 1, 2)

        class Edge(nn.Module):
            def __init__(self, two):
                super().__init__()
                self.two = two
                self.a = nn.Sequential(nn.Conv2d(8, 40, 1, bias=False), nn.BatchNorm2d(40), nn.LeakyReLU(0.2))
                self.b = nn.Sequential(nn.Conv2d(80, 48, 1, bias=False), nn.BatchNorm2d(48), nn.LeakyReLU(0.2))
                self.fc = nn.Linear(88 if two else 40, classes)

            def forward(self, x):
                h = self.a(edges(x, 6)).amax(dim=-1)
                if not self.two:
                    return self.fc(h.amax(dim=-1))
                g = self.b(edges(h, 6)).amax(dim=-1)
                return self.fc(torch.cat([h, g], dim=1).amax(dim=-1))
        return Edge(name == "edge_knn")
    if name == "embedding_bag":
        class Bag(nn.Module):
            def __init__(self):
                super().__init__()
                self.bag = nn.EmbeddingBag(5000, 32, mode="mean")
                self.fc = nn.Linear(32, classes)

            def forward(self, ids):
                return self.fc(self.bag(ids))
        return Bag()
    if name in ("sine_coords", "sine_coords_sgd"):
        class Sine(nn.Module):  # SIREN-style sin(w0 * Linear) over per-sample coordinates [B, N, 2]
            def __init__(self, h=96):
                super().__init__()
                self.fc1 = nn.Linear(2, h)
                self.fc2 = nn.Linear(h, h)
                self.fc3 = nn.Linear(h, h)
                self.out = nn.Linear(h, classes)

            def forward(self, x):
                h = torch.sin(20.0 * self.fc1(x))
                h = torch.sin(self.fc2(h))
                h = torch.sin(self.fc3(h))
                return self.out(h).transpose(1, 2)
        return Sine()
    if name == "sine_refine":
        class SineRefine(nn.Module):  # sine layers, then a 1x1 Conv1d over the transposed features added back
            def __init__(self, h=96):
                super().__init__()
                self.fc1 = nn.Linear(2, h)
                self.fc2 = nn.Linear(h, h)
                self.refine = nn.Conv1d(h, h, 1)
                self.out = nn.Linear(h, classes)

            def forward(self, x):
                h = torch.sin(self.fc2(torch.sin(20.0 * self.fc1(x))))
                r = self.refine(h.transpose(1, 2).unsqueeze(-1).squeeze(-1))
                h = h + torch.sin(r).transpose(1, 2)
                return self.out(h).transpose(1, 2)
        return SineRefine()
    if name == "dense_cat":
        class DenseCat(nn.Module):  # DenseNet-style: a feature read only by concatenations (three of them)
            def __init__(self):
                super().__init__()
                self.fc0 = nn.Linear(1536, 256)
                self.fc1 = nn.Linear(264, 64)
                self.fc2 = nn.Linear(320, 512)
                self.fc3 = nn.Linear(832, classes)

            def forward(self, x):
                h0 = self.fc0(x)
                h1 = F.relu(self.fc1(torch.cat([h0, x[:, :8]], dim=1)))
                h2 = F.relu(self.fc2(torch.cat([h0, h1], dim=1)))
                return self.fc3(torch.cat([h0, h1, h2], dim=1))
        return DenseCat()
    if name == "mha_kdim":
        class CrossAttn(nn.Module):  # queries attend to a second input of another width (kdim, vdim)
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(48)
                self.attn = nn.MultiheadAttention(48, 4, kdim=80, vdim=80, batch_first=True)
                self.fc = nn.Linear(48, classes)

            def forward(self, x, ctx):
                x = x + self.attn(self.norm(x), ctx, ctx, need_weights=False)[0]
                return self.fc(x.mean(dim=1))
        return CrossAttn()
    if name == "cross_self_layers":
        # Unseen set 8's remaining miss, not fixed: -0.86 / -0.93 % at batches 16 / 32 (forward peak), one
        # query-sized [B, 12, 48] tensor low during layer 1's cross-attention (the cross-attention alone,
        # without self-attention and MLP, is -1.1 to -1.5 %). A guess, not verified: the query is a temporary
        # (n1's output) that MHA transposes for batch_first; the projection's matmul folds the transposed
        # 3-D input with reshape, a copy it saves, while the caller still holds the temporary until MHA
        # returns - the plan frees it after its last reader.
        class Layer(nn.Module):  # cross-attention (kdim, vdim), self-attention, GELU MLP, pre-norm
            def __init__(self, d=48, dc=80):
                super().__init__()
                self.n1 = nn.LayerNorm(d)
                self.cross = nn.MultiheadAttention(d, 4, kdim=dc, vdim=dc, batch_first=True)
                self.n2 = nn.LayerNorm(d)
                self.self_attn = nn.MultiheadAttention(d, 4, batch_first=True)
                self.n3 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x, ctx):
                x = x + self.cross(self.n1(x), ctx, ctx, need_weights=False)[0]
                h = self.n2(x)
                x = x + self.self_attn(h, h, h, need_weights=False)[0]
                return x + self.ff(self.n3(x))

        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.ctx_norm = nn.LayerNorm(80)
                self.layers = nn.ModuleList([Layer() for _ in range(2)])
                self.fc = nn.Linear(48, classes)

            def forward(self, x, ctx):
                ctx = self.ctx_norm(ctx)
                for layer in self.layers:
                    x = layer(x, ctx)
                return self.fc(x.mean(dim=1))
        return Stack()
    if name == "grad_sum_heads":
        class Heads(nn.Module):  # two Linears read one tensor: backward adds their input gradients
            def __init__(self):
                super().__init__()
                self.fc0 = nn.Linear(40, 320)
                self.fa = nn.Linear(320, classes)
                self.fb = nn.Linear(320, classes)

            def forward(self, x):
                h = F.relu(self.fc0(x))
                return self.fa(h) + self.fb(h)
        return Heads()
    if name in ("bce_logits_aux", "sqerr_aux"):
        class Aux(nn.Module):  # an auxiliary loss computed in forward and added to the logits
            def __init__(self, d=48, h=128):
                super().__init__()
                self.trunk = nn.Sequential(nn.Linear(d, h), nn.ReLU())
                self.head = nn.Linear(h, d)
                self.fc = nn.Linear(h, classes)
                self.w = nn.Parameter(torch.full((classes,), 1e-2))

            def forward(self, x):
                h = self.trunk(x)
                if name == "bce_logits_aux":
                    aux = F.binary_cross_entropy_with_logits(self.head(h), (x > 0).float(), reduction="none")
                else:
                    aux = (self.head(h) - x).pow(2)
                return self.fc(h) - aux.mean(dim=1, keepdim=True) * self.w
        return Aux()
    if name in ("frozen_bn_cnn", "frozen_bn_cnn_sgd"):
        from torchvision.ops.misc import FrozenBatchNorm2d

        def cfb(cin, cout, stride):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), FrozenBatchNorm2d(cout), nn.ReLU())
        return nn.Sequential(cfb(3, 24, 1), cfb(24, 48, 2), cfb(48, 48, 1), cfb(48, 96, 2),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(96, classes))
    def dft_mel_buffers(module, n_fft, hop, mels):  # fixed DFT filters and a mel matrix, as buffers
        module.hop, module.bins = hop, n_fft // 2 + 1
        n = torch.arange(n_fft).float()
        k = torch.arange(module.bins).float().unsqueeze(1)
        module.register_buffer("dft", torch.cat([torch.cos(6.2832 * k * n / n_fft),
                                                 torch.sin(6.2832 * k * n / n_fft)], 0).unsqueeze(1),
                               persistent=False)
        module.register_buffer("mel", torch.rand(mels, module.bins), persistent=False)

    if name == "logmel_bn_cnn":
        class LogMelCnn(nn.Module):
            def __init__(self, n_fft=200, hop=100, mels=32):
                super().__init__()
                dft_mel_buffers(self, n_fft, hop, mels)
                self.cnn = nn.Sequential(
                    nn.Conv2d(1, 24, 3, 1, 1, bias=False), nn.BatchNorm2d(24), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(24, 48, 3, 1, 1, bias=False), nn.BatchNorm2d(48), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(48, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes))

            def forward(self, x):
                spec = F.conv1d(x, self.dft, stride=self.hop)
                re, im = spec[:, :self.bins], spec[:, self.bins:]
                m = torch.matmul(self.mel, re * re + im * im)
                return self.cnn(torch.log(m.clamp(min=1e-6)).unsqueeze(1))
        return LogMelCnn()
    if name == "buffer_dft_mel":
        class LogMel(nn.Module):  # fixed filters as buffers: no gradient, no optimizer state
            def __init__(self, n_fft=200, hop=100, mels=32):
                super().__init__()
                dft_mel_buffers(self, n_fft, hop, mels)
                self.conv = nn.Conv2d(1, 16, 3, 1, 1)
                self.fc = nn.Linear(16, classes)

            def forward(self, x):
                spec = F.conv1d(x, self.dft, stride=self.hop)
                re, im = spec[:, :self.bins], spec[:, self.bins:]
                m = torch.matmul(self.mel, re * re + im * im)
                h = F.relu(self.conv(torch.log(m.clamp(min=1e-6)).unsqueeze(1)))
                return self.fc(h.mean(dim=(2, 3)))
        return LogMel()
    if name in ("frozen_stem_cnn", "frozen_stem_cnn_sgd"):
        def block(cin, cout, stride):
            return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
        return freeze(nn.Sequential(*block(3, 16, 1), *block(16, 32, 2), *block(32, 64, 2), *block(64, 64, 1),
                                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes)), FROZEN[name])
    if name == "lora_mlp":
        class LoraLinear(nn.Module):
            def __init__(self, d, r):
                super().__init__()
                self.base = nn.Linear(d, d)
                self.a = nn.Linear(d, r, bias=False)
                self.b = nn.Linear(r, d, bias=False)

            def forward(self, x):
                return self.base(x) + self.b(self.a(x))

        return freeze(nn.Sequential(LoraLinear(256, 8), nn.ReLU(), LoraLinear(256, 8), nn.ReLU(), LoraLinear(256, 8),
                                    nn.ReLU(), nn.Linear(256, classes)), FROZEN[name])
    if name == "frozen_embed_head":
        class EmbedHead(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(5000, 64)
                self.mix = nn.Linear(64, 128)
                self.head = nn.Linear(128, classes)

            def forward(self, ids):
                return self.head(F.relu(self.mix(self.embed(ids))).mean(1))

        return freeze(EmbedHead(), FROZEN[name])
    def head_view(x, h):  # [B, T, D] -> [B, h, T, D / h], a view
        return x.view(x.shape[0], x.shape[1], h, -1).transpose(1, 2)

    if name == "elu_feature_attn":
        class EluAttention(nn.Module):
            def __init__(self, d=48, heads=3):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                q = F.elu(head_view(q, self.heads)) + 1
                k = F.elu(head_view(k, self.heads)) + 1
                v = head_view(v, self.heads)
                z = 1.0 / (q @ k.sum(dim=2, keepdim=True).transpose(-1, -2) + 1e-6)
                y = ((q @ (k.transpose(-1, -2) @ v)) * z).transpose(1, 2).reshape(x.shape)
                return self.fc(y.mean(dim=1))
        return EluAttention()
    if name == "mixture_logsumexp":
        class Mixture(nn.Module):
            def __init__(self, comps=6, h=64):
                super().__init__()
                self.comps = comps
                self.trunk = nn.Sequential(nn.Linear(12, h), nn.Tanh())
                self.pi = nn.Linear(h, comps)
                self.mu = nn.Linear(h, comps * 3)
                self.log_sigma = nn.Linear(h, comps * 3)
                self.register_buffer("grid", torch.randn(classes, 3), persistent=False)

            def forward(self, x):
                h = self.trunk(x)
                mu = self.mu(h).view(-1, 1, self.comps, 3)
                log_sigma = self.log_sigma(h).view(-1, 1, self.comps, 3)
                z = (self.grid[None, :, None, :] - mu) * torch.exp(-log_sigma)
                log_n = (-0.5 * z * z - log_sigma).sum(dim=-1)
                return torch.logsumexp(log_n + F.log_softmax(self.pi(h), dim=-1).unsqueeze(1), dim=-1)
        return Mixture()
    if name == "sr_attention_mixffn":
        class SrBlock(nn.Module):
            def __init__(self, d=24, sr=4, hidden=96):
                super().__init__()
                self.embed = nn.Conv2d(3, d, 3, 2, 1)
                self.n0 = nn.LayerNorm(d)
                self.q = nn.Linear(d, d)
                self.kv = nn.Linear(d, 2 * d)
                self.sr = nn.Conv2d(d, d, sr, sr)
                self.sr_norm = nn.LayerNorm(d)
                self.n1 = nn.LayerNorm(d)
                self.fc1 = nn.Linear(d, hidden)
                self.dw = nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden)
                self.fc2 = nn.Linear(hidden, d)
                self.head = nn.Linear(d, classes)

            def forward(self, x):
                x = self.embed(x)
                b, d, hh, ww = x.shape
                x = self.n0(x.flatten(2).transpose(1, 2))
                r = self.sr(x.transpose(1, 2).reshape(b, d, hh, ww)).flatten(2).transpose(1, 2)
                k, v = self.kv(self.sr_norm(r)).chunk(2, dim=-1)
                x = x + (self.q(x) @ k.transpose(1, 2)).softmax(dim=-1) @ v
                h = self.fc1(self.n1(x))
                h = self.dw(h.transpose(1, 2).reshape(b, -1, hh, ww)).flatten(2).transpose(1, 2)
                return self.head((x + self.fc2(F.gelu(h))).mean(dim=1))
        return SrBlock()
    if name == "token_depthwise_ffn":  # a Mix-FFN alone: tokens -> image layout -> depthwise 3x3 -> tokens
        class TokenDepthwise(nn.Module):
            def __init__(self, d=40, hidden=160, side=12):
                super().__init__()
                self.side = side
                self.fc1 = nn.Linear(d, hidden)
                self.dw = nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden)
                self.fc2 = nn.Linear(hidden, d)
                self.head = nn.Linear(d, classes)

            def forward(self, x):
                b = x.shape[0]
                h = self.fc1(x).transpose(1, 2).reshape(b, -1, self.side, self.side)
                h = F.gelu(self.dw(h).flatten(2).transpose(1, 2))
                return self.head((x + self.fc2(h)).mean(dim=1))
        return TokenDepthwise()
    if name == "einsum_chunk_heads":  # MaxViT-style: q, k, v chunks viewed per window and head, einsum
        class EinsumChunkHeads(nn.Module):
            def __init__(self, d=48, heads=3, windows=4):
                super().__init__()
                self.heads, self.windows = heads, windows
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                self.head = nn.Linear(d, classes)

            def forward(self, x):
                b, t, d = x.shape
                g, h = self.windows, self.heads
                q, k, v = torch.chunk(self.qkv(x), 3, dim=-1)
                q = q.reshape(b, g, t // g, h, d // h).permute(0, 1, 3, 2, 4)
                k = k.reshape(b, g, t // g, h, d // h).permute(0, 1, 3, 2, 4)
                v = v.reshape(b, g, t // g, h, d // h).permute(0, 1, 3, 2, 4)
                k = k * (d // h) ** -0.5
                w = torch.einsum("bghid,bghjd->bghij", q, k).softmax(dim=-1)
                y = torch.einsum("bghij,bghjd->bghid", w, v).permute(0, 1, 3, 2, 4).reshape(b, t, d)
                return self.head(self.o(y).mean(dim=1))
        return EinsumChunkHeads()
    if name == "unfold_involution":
        class Involution(nn.Module):
            def __init__(self, c=16, k=5, groups=2):
                super().__init__()
                self.k, self.groups = k, groups
                self.span = nn.Sequential(nn.Conv2d(c, 8, 1), nn.ReLU(), nn.Conv2d(8, k * k * groups, 1))
                self.fc = nn.Linear(c, classes)

            def forward(self, x):
                b, c, hh, ww = x.shape
                kk, g = self.k * self.k, self.groups
                w = self.span(x).view(b, g, 1, kk, hh, ww)
                p = F.unfold(x, self.k, padding=self.k // 2).view(b, g, c // g, kk, hh, ww)
                return self.fc(F.relu((w * p).sum(dim=3).view(b, c, hh, ww)).mean(dim=(2, 3)))
        return Involution()
    if name == "vq_straight_through":
        class VQ(nn.Module):
            def __init__(self, d=32, codes=96):
                super().__init__()
                self.enc = nn.Sequential(nn.Conv2d(1, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, d, 3, 1, 1))
                self.codebook = nn.Embedding(codes, d)
                self.dec = nn.ConvTranspose2d(d, classes, 4, 2, 1)

            def forward(self, x):
                z = self.enc(x)
                b, d, hh, ww = z.shape
                flat = z.permute(0, 2, 3, 1).reshape(-1, d)
                dist = (flat.pow(2).sum(1, keepdim=True) - 2 * flat @ self.codebook.weight.t()
                        + self.codebook.weight.pow(2).sum(1))
                q = self.codebook(dist.argmin(dim=1)).view(b, hh, ww, d).permute(0, 3, 1, 2)
                loss = (q - z.detach()).pow(2).mean() + 0.25 * (q.detach() - z).pow(2).mean()
                return self.dec(z + (q - z).detach()) + loss
        return VQ()
    if name == "cumsum_gates":
        class CumsumGates(nn.Module):
            def __init__(self, d=48):
                super().__init__()
                self.inp = nn.Linear(12, d)
                self.gate = nn.Linear(d, d)
                self.cand = nn.Linear(d, d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                x = self.inp(x)
                k = self.gate(x)
                a_star = torch.cumsum(-F.softplus(k), dim=1)
                h = torch.exp(a_star) * torch.cumsum(torch.sigmoid(k) * self.cand(x) * torch.exp(-a_star), dim=1)
                return self.fc((x + h).mean(dim=1))
        return CumsumGates()
    if name == "variable_selection_grn":
        class VarSelect(nn.Module):
            def __init__(self, nvar=5, d=40):
                super().__init__()
                self.embed = nn.ModuleList([nn.Linear(1, d) for _ in range(nvar)])
                self.grn = nn.ModuleList([nn.Sequential(nn.Linear(d, d), nn.ELU(), nn.Linear(d, 2 * d), nn.GLU())
                                          for _ in range(nvar)])
                self.weights = nn.Linear(nvar * d, nvar)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                emb = [lin(x[:, :, i:i + 1]) for i, lin in enumerate(self.embed)]
                w = torch.softmax(self.weights(torch.cat(emb, dim=-1)), dim=-1)
                feats = torch.stack([g(e) for g, e in zip(self.grn, emb)], dim=-1)
                return self.fc((feats * w.unsqueeze(2)).sum(dim=-1).mean(dim=1))
        return VarSelect()
    if name == "mingru_layers":
        class Layer(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.norm = nn.LayerNorm(d)
                self.gate = nn.Linear(d, d)
                self.cand = nn.Linear(d, d)
                self.ff = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

            def forward(self, x):
                hx = self.norm(x)
                k = self.gate(hx)
                a_star = torch.cumsum(-F.softplus(k), dim=1)
                h = torch.exp(a_star) * torch.cumsum(torch.sigmoid(k) * self.cand(hx) * torch.exp(-a_star), dim=1)
                x = x + h
                return x + self.ff(x)

        class MinGRULayers(nn.Module):
            def __init__(self, d=40):
                super().__init__()
                self.inp = nn.Linear(10, d)
                self.layers = nn.Sequential(Layer(d), Layer(d))
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                return self.fc(self.layers(self.inp(x)).mean(dim=1))
        return MinGRULayers()
    if name == "lstm_shared_value_attn":
        class SharedValue(nn.Module):
            def __init__(self, d=24, heads=3):
                super().__init__()
                self.heads, self.dh = heads, d // heads
                self.lstm = nn.LSTM(d, d, batch_first=True)
                self.gate = nn.Linear(d, 2 * d)
                self.norm = nn.LayerNorm(d)
                self.q = nn.Linear(d, d)
                self.k = nn.Linear(d, d)
                self.v = nn.Linear(d, self.dh)
                self.o = nn.Linear(self.dh, d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                b, t, _ = x.shape
                h, _ = self.lstm(x)
                h = self.norm(x + F.glu(self.gate(h), dim=-1))
                q = self.q(h).view(b, t, self.heads, self.dh).transpose(1, 2)
                k = self.k(h).view(b, t, self.heads, self.dh).transpose(1, 2)
                a = torch.softmax(q @ k.transpose(-1, -2) * self.dh ** -0.5, dim=-1)
                att = self.o((a @ self.v(h).unsqueeze(1)).mean(dim=1))
                return self.fc((h + att)[:, -1])
        return SharedValue()
    if name == "detr_memory_pos":  # two decoder layers whose cross-attention keys are memory + the same pos buffer
        class MemoryPos(nn.Module):
            def __init__(self, d=32, queries=10):
                super().__init__()
                self.proj = nn.Conv2d(8, d, 2, 2)                           # 6 x 6 = 36 tokens
                self.norm = nn.LayerNorm(d)
                self.register_buffer("pos", torch.randn(36, 1, d), persistent=False)
                self.cross = nn.ModuleList([nn.MultiheadAttention(d, 2) for _ in range(2)])
                self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(2)])
                self.query = nn.Embedding(queries, d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                memory = self.norm(self.proj(x).flatten(2).permute(2, 0, 1))   # [S, B, d]
                qp = self.query.weight.unsqueeze(1).repeat(1, memory.shape[1], 1)
                tgt = torch.zeros_like(qp)
                for attn, norm in zip(self.cross, self.norms):
                    tgt = norm(tgt + attn(tgt + qp, memory + self.pos, memory, need_weights=False)[0])
                return self.fc(tgt).permute(1, 2, 0)
        return MemoryPos()
    if name == "mha_dropout_queries":
        class QueryDecoder(nn.Module):
            def __init__(self, d=32, queries=12):
                super().__init__()
                self.pos = nn.Parameter(torch.randn(36, 1, d) * 0.1)
                self.self_attn = nn.MultiheadAttention(d, 2, dropout=0.1)
                self.cross = nn.MultiheadAttention(d, 2, dropout=0.1)
                self.query = nn.Embedding(queries, d)
                self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                mem = x.transpose(0, 1)                                   # [S, B, d]
                qp = self.query.weight.unsqueeze(1).repeat(1, mem.shape[1], 1)
                tgt = torch.zeros_like(qp)
                q = tgt + qp
                tgt = self.n1(tgt + self.self_attn(q, q, tgt, need_weights=False)[0])
                tgt = self.n2(tgt + self.cross(tgt + qp, mem + self.pos, mem, need_weights=False)[0])
                return self.fc(tgt).permute(1, 2, 0)
        return QueryDecoder()
    if name == "revin_patch_bn":
        class RevinPatch(nn.Module):
            def __init__(self, ch=5, t=40, p=8, d=24, horizon=10):
                super().__init__()
                self.p, self.horizon = p, horizon
                self.aff_w = nn.Parameter(torch.ones(ch))
                self.aff_b = nn.Parameter(torch.zeros(ch))
                self.embed = nn.Linear(p, d)
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                self.bn = nn.BatchNorm1d(d)
                self.head = nn.Linear(t // p * d, horizon)

            def forward(self, x):                                       # [B, T, C]
                b, t, c = x.shape
                mean = x.mean(dim=1, keepdim=True).detach()
                std = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + 1e-5).detach()
                x = (x - mean) / std * self.aff_w + self.aff_b
                z = self.embed(x.permute(0, 2, 1).reshape(b * c, t // self.p, self.p))
                q, k, v = self.qkv(z).chunk(3, dim=-1)
                z = z + self.o(torch.softmax(q @ k.transpose(-1, -2) * 0.2, dim=-1) @ v)
                z = self.bn(z.transpose(1, 2)).transpose(1, 2)
                y = self.head(z.flatten(1)).reshape(b, c, self.horizon).permute(0, 2, 1)
                y = (y - self.aff_b) / (self.aff_w + 1e-10) * std + mean
                return y.transpose(1, 2)
        return RevinPatch()
    if name == "patch_bn_encoder":
        class BnLayer(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                self.bn1 = nn.BatchNorm1d(d)
                self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Dropout(0.1), nn.Linear(2 * d, d))
                self.bn2 = nn.BatchNorm1d(d)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = (a.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                           for a in self.qkv(x).chunk(3, dim=-1))
                a = torch.softmax(q @ k.transpose(-1, -2) / 4.0, dim=-1) @ v
                x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
                x = self.bn1(x.transpose(1, 2)).transpose(1, 2)
                return self.bn2((x + self.mlp(x)).transpose(1, 2)).transpose(1, 2)

        class PatchEncoder(nn.Module):
            def __init__(self, ch=4, t=48, p=8, d=32, horizon=12):
                super().__init__()
                self.p, self.horizon = p, horizon
                self.aff_w = nn.Parameter(torch.ones(ch))
                self.aff_b = nn.Parameter(torch.zeros(ch))
                self.embed = nn.Linear(p, d)
                self.pos = nn.Parameter(torch.randn(t // p, d) * 0.02)
                self.layers = nn.Sequential(BnLayer(d, 2), BnLayer(d, 2))
                self.head = nn.Linear(t // p * d, horizon)

            def forward(self, x):
                b, t, c = x.shape
                mean = x.mean(dim=1, keepdim=True).detach()
                std = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + 1e-5).detach()
                x = (x - mean) / std * self.aff_w + self.aff_b
                z = self.embed(x.permute(0, 2, 1).reshape(b * c, t // self.p, self.p)) + self.pos
                y = self.head(self.layers(z).flatten(1)).reshape(b, c, self.horizon).permute(0, 2, 1)
                y = (y - self.aff_b) / (self.aff_w + 1e-10) * std + mean
                return y.transpose(1, 2)
        return PatchEncoder()
    if name == "bool_mask_positions":
        class MaskPositions(nn.Module):
            def __init__(self, vocab=300, t=30, d=32):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                self.gen = nn.Linear(d, d)
                self.head = nn.Linear(d, vocab)
                self.disc = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
                self.fc = nn.Linear(d, classes)
                mask = torch.zeros(t, dtype=torch.bool)
                mask[2::5] = True
                self.register_buffer("mask", mask, persistent=False)

            def forward(self, ids):
                g = torch.tanh(self.gen(self.emb(ids.masked_fill(self.mask, 1))))
                logits = self.head(g[:, self.mask])                            # [B, 6, vocab]
                term = torch.logsumexp(logits, dim=-1).mean(dim=1)
                corrupt = ids.clone()
                corrupt[:, self.mask] = logits.argmax(dim=-1)
                return self.fc(self.disc(self.emb(corrupt))).transpose(1, 2) + term.view(-1, 1, 1)
        return MaskPositions()
    if name == "detached_key_queue":
        class KeyQueue(nn.Module):
            def __init__(self, d=48, k=32):
                super().__init__()
                self.enc = nn.Sequential(
                    nn.Conv2d(3, 24, 3, 1, 1), nn.BatchNorm2d(24), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                    nn.Conv2d(24, 48, 3, 1, 1), nn.BatchNorm2d(48), nn.ReLU(inplace=True),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten())
                self.proj = nn.Sequential(nn.Linear(48, 96), nn.ReLU(inplace=True), nn.Linear(96, d))
                self.register_buffer("queue", F.normalize(torch.randn(d, k), dim=0))

            def forward(self, x1, x2):
                q = F.normalize(self.proj(self.enc(x1)), dim=1)
                k = F.normalize(self.proj(self.enc(x2)), dim=1).detach()
                return torch.cat([(q * k).sum(dim=1, keepdim=True), q @ self.queue], dim=1) / 0.07
        return KeyQueue()
    if name in ("detached_teacher", "nograd_teacher"):
        def small_cnn(c):
            return nn.Sequential(
                nn.Conv2d(3, c, 3, 1, 1), nn.BatchNorm2d(c), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                nn.Conv2d(c, 2 * c, 3, 1, 1), nn.BatchNorm2d(2 * c), nn.ReLU(inplace=True),
                nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * c, classes))

        class Distill(nn.Module):  # the teacher's result .detach()ed, or the teacher run under no_grad
            def __init__(self, under_no_grad):
                super().__init__()
                self.under_no_grad = under_no_grad
                self.teacher = small_cnn(40)
                self.student = small_cnn(12)

            def forward(self, x):
                if self.under_no_grad:
                    with torch.no_grad():
                        t = self.teacher(x)
                else:
                    t = self.teacher(x).detach()
                s = self.student(x)
                kl = (F.softmax(t / 3.0, dim=1) * (F.log_softmax(t / 3.0, dim=1) - F.log_softmax(s / 3.0, dim=1)))
                return s + kl.sum(dim=1, keepdim=True) * 9.0
        return Distill(name == "nograd_teacher")
    if name == "root_nograd_codes":
        class Codes(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Sequential(
                    nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(),
                    nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 64))
                self.prototypes = nn.Parameter(torch.randn(64, 3000) * 0.1)
                self.fc = nn.Linear(64, classes)

            def forward(self, x):
                h = F.normalize(self.enc(x), dim=1)
                with torch.no_grad():
                    q = torch.softmax((h @ self.prototypes) / 0.05, dim=1)
                    q = q / q.sum(dim=0, keepdim=True)
                    q = q / q.sum(dim=1, keepdim=True)
                p = torch.log_softmax((h @ self.prototypes) / 0.1, dim=1)
                return self.fc(h) - (q * p).sum(dim=1, keepdim=True)
        return Codes()
    if name == "mha_nograd":
        class NoGradAttention(nn.Module):
            def __init__(self, d=256):
                super().__init__()
                self.proj = nn.Linear(32, d)
                self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                h = self.proj(x)
                with torch.no_grad():
                    a = self.attn(h, h, h, need_weights=False)[0]
                return self.fc((h + a).mean(1))
        return NoGradAttention()
    if name == "momentum_key_encoder":
        def encoder():
            return nn.Sequential(
                nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(),
                nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
                nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 64))

        class MomentumContrast(nn.Module):
            def __init__(self):
                super().__init__()
                self.query = encoder()
                self.key = encoder()
                self.fc = nn.Linear(64, classes)
                self.register_buffer("queue", F.normalize(torch.randn(64, 96), dim=0))

            def forward(self, x):
                q = F.normalize(self.query(x), dim=1)
                with torch.no_grad():
                    k = F.normalize(self.key(torch.flip(x, dims=[3])), dim=1)
                pos = (q * k).sum(dim=1, keepdim=True)
                neg = q @ self.queue
                contrast = torch.logsumexp(torch.cat([pos, neg], dim=1) / 0.2, dim=1, keepdim=True) - pos / 0.2
                return self.fc(q) + contrast
        return MomentumContrast()
    if name == "gather_expanded_index":
        class RelGather(nn.Module):
            def __init__(self, d=24, heads=2, t=20, span=8):
                super().__init__()
                self.heads = heads
                self.qk = nn.Linear(d, 2 * d)
                self.rel = nn.Parameter(torch.randn(2 * span, d // heads) * 0.1)
                r = torch.arange(t).unsqueeze(1) - torch.arange(t).unsqueeze(0)
                self.register_buffer("idx", torch.clamp(r + span, 0, 2 * span - 1), persistent=False)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                b, t, d = x.shape
                q, k = (a.view(b, t, self.heads, d // self.heads).transpose(1, 2) for a in self.qk(x).chunk(2, -1))
                c2p = torch.gather(q @ self.rel.t(), -1, self.idx.expand(b, self.heads, t, t))
                w = torch.softmax(q @ k.transpose(-1, -2) + c2p, dim=-1)
                return self.fc((w @ k).transpose(1, 2).reshape(b, t, d).mean(dim=1))
        return RelGather()
    if name == "sparsemax_trees":
        class Trees(nn.Module):
            def __init__(self, din=12, trees=12, depth=3, out=2):
                super().__init__()
                self.sel = nn.Parameter(torch.randn(trees, depth, din) * 0.5)
                self.thr = nn.Parameter(torch.randn(trees, depth) * 0.1)
                self.resp = nn.Parameter(torch.randn(trees, out, 2 ** depth) * 0.1)
                codes = torch.tensor([[(i >> j) & 1 for i in range(2 ** depth)] for j in range(depth)]).float()
                self.register_buffer("codes", codes, persistent=False)
                self.fc = nn.Linear(trees * out, classes)

            def forward(self, x):
                zs, _ = torch.sort(self.sel, dim=-1, descending=True)
                rng = torch.arange(1, zs.shape[-1] + 1, dtype=zs.dtype)
                css = zs.cumsum(-1) - 1
                support = (rng * zs > css).to(zs.dtype)
                tau = (css * support).sum(-1, keepdim=True) / support.sum(-1, keepdim=True)
                w = torch.clamp(self.sel - tau, min=0)
                t = torch.einsum("bi,tdi->btd", x, w) - self.thr
                c = torch.clamp(0.5 * torch.stack([-t, t], dim=-1) + 0.5, 0, 1)
                pick = c[..., 0].unsqueeze(-1) * (1 - self.codes) + c[..., 1].unsqueeze(-1) * self.codes
                leaf = pick.prod(dim=2)
                return self.fc(torch.einsum("btl,tol->bto", leaf, self.resp).flatten(1))
        return Trees()
    if name == "cosine_memory":
        class CosineMemory(nn.Module):
            def __init__(self, din=10, m=40, w=12):
                super().__init__()
                self.mem0 = nn.Parameter(torch.randn(m, w) * 0.1)
                self.key = nn.Linear(din, w)
                self.add = nn.Linear(din, w)
                self.fc = nn.Linear(w, classes)

            def forward(self, x):
                b, t = x.shape[0], x.shape[1]
                mem = self.mem0.unsqueeze(0).expand(b, -1, -1)
                reads = 0
                for i in range(t):
                    wt = (5.0 * F.cosine_similarity(mem, self.key(x[:, i]).unsqueeze(1), dim=-1)).softmax(-1)
                    mem = mem + wt.unsqueeze(-1) * torch.tanh(self.add(x[:, i])).unsqueeze(1)
                    reads = reads + (wt.unsqueeze(-1) * mem).sum(1)
                return self.fc(reads)
        return CosineMemory()
    if name == "cosine_prototypes":
        class CosinePrototypes(nn.Module):
            def __init__(self, c=24):
                super().__init__()
                self.conv = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU())
                self.protos = nn.Parameter(torch.randn(classes, c))

            def forward(self, x):
                f = self.conv(x)
                s = [F.cosine_similarity(f, p.view(1, -1, 1, 1), dim=1).mean(dim=(1, 2)) for p in self.protos]
                return torch.stack(s, 1) * 10.0
        return CosinePrototypes()
    if name == "tasnet_gln_blocks":
        class GLN(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.g = nn.Parameter(torch.ones(1, c, 1))
                self.b = nn.Parameter(torch.zeros(1, c, 1))

            def forward(self, x):
                m = x.mean(dim=(1, 2), keepdim=True)
                v = ((x - m) ** 2).mean(dim=(1, 2), keepdim=True)
                return self.g * (x - m) / torch.sqrt(v + 1e-8) + self.b

        class Block(nn.Module):
            def __init__(self, b, h, dil):
                super().__init__()
                self.inp, self.p1, self.n1 = nn.Conv1d(b, h, 1), nn.PReLU(), GLN(h)
                self.dw = nn.Conv1d(h, h, 3, padding=dil, dilation=dil, groups=h)
                self.p2, self.n2 = nn.PReLU(), GLN(h)
                self.res, self.skip = nn.Conv1d(h, b, 1), nn.Conv1d(h, b, 1)

            def forward(self, x):
                y = self.n2(self.p2(self.dw(self.n1(self.p1(self.inp(x))))))
                return x + self.res(y), self.skip(y)

        class TasNet(nn.Module):
            def __init__(self, n=40, b=24, h=48):
                super().__init__()
                self.enc = nn.Conv1d(1, n, 12, stride=6, bias=False)
                self.norm, self.bott = GLN(n), nn.Conv1d(n, b, 1)
                self.blocks = nn.ModuleList([Block(b, h, 2 ** i) for i in range(3)])
                self.prelu, self.mask = nn.PReLU(), nn.Conv1d(b, classes * n, 1)
                self.dec = nn.ConvTranspose1d(n, 1, 12, stride=6, bias=False)
                self.n = n

            def forward(self, x):
                w = F.relu(self.enc(x))
                y = self.bott(self.norm(w))
                skips = 0
                for blk in self.blocks:
                    y, s = blk(y)
                    skips = skips + s
                m = torch.sigmoid(self.mask(self.prelu(skips)))
                bsz, t = w.shape[0], w.shape[2]
                masked = w.unsqueeze(1) * m.view(bsz, classes, self.n, t)
                return self.dec(masked.reshape(bsz * classes, self.n, t)).view(bsz, classes, -1)
        return TasNet()
    if name == "node_temp_trees":
        def sparsemax(z):
            zs, _ = torch.sort(z, dim=-1, descending=True)
            rng = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
            css = zs.cumsum(-1) - 1
            support = (rng * zs > css).to(z.dtype)
            tau = (css * support).sum(dim=-1, keepdim=True) / support.sum(dim=-1, keepdim=True)
            return torch.clamp(z - tau, min=0)

        class Odst(nn.Module):
            def __init__(self, din, trees=16, depth=3, out=2):
                super().__init__()
                self.sel = nn.Parameter(torch.randn(trees, depth, din) * 0.5)
                self.thr = nn.Parameter(torch.randn(trees, depth) * 0.1)
                self.log_temp = nn.Parameter(torch.zeros(trees, depth))
                self.resp = nn.Parameter(torch.randn(trees, out, 2 ** depth) * 0.1)
                codes = torch.tensor([[(i >> j) & 1 for j in range(depth)] for i in range(2 ** depth)]).float()
                self.register_buffer("codes", codes.t().contiguous(), persistent=False)

            def forward(self, x):
                f = torch.einsum("bi,tdi->btd", x, sparsemax(self.sel))
                t = (f - self.thr) * torch.exp(-self.log_temp)
                c = torch.clamp(0.5 * torch.stack([-t, t], dim=-1) + 0.5, 0, 1)
                left, right = c[..., 0].unsqueeze(-1), c[..., 1].unsqueeze(-1)
                leaf = (left * (1 - self.codes) + right * self.codes).prod(dim=2)
                return torch.einsum("btl,tol->bto", leaf, self.resp).flatten(1)

        class Node(nn.Module):
            def __init__(self, din=10):
                super().__init__()
                self.bn = nn.BatchNorm1d(din)
                self.l1, self.l2 = Odst(din), Odst(din + 32)
                self.fc = nn.Linear(64, classes)

            def forward(self, x):
                x = self.bn(x)
                h1 = self.l1(x)
                return self.fc(torch.cat([h1, self.l2(torch.cat([x, h1], dim=1))], dim=1))
        return Node()
    if name == "blur_depthwise_buffer":
        class Blur(nn.Module):
            def __init__(self, c):
                super().__init__()
                a = torch.tensor([1.0, 2.0, 1.0])
                self.register_buffer("k", ((a[:, None] * a[None, :]) / 16.0).expand(c, 1, 3, 3).contiguous(),
                                     persistent=False)
                self.c = c

            def forward(self, x):
                return F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), self.k, stride=2, groups=self.c)

        layers, c = [], 3
        for i, co in enumerate((24, 48, 64)):
            layers += [nn.Conv2d(c, co, 3, 1, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True)]
            layers += ([nn.MaxPool2d(2, 1)] if i == 0 else []) + [Blur(co)]
            c = co
        return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, classes))
    if name == "pointnet_grouping":
        def gather_points(pts, idx):
            b, c = pts.shape[0], pts.shape[2]
            return pts.gather(1, idx.reshape(b, -1).unsqueeze(-1).expand(-1, -1, c)).view(list(idx.shape) + [c])

        def fps(xyz, m):
            dist = (xyz[:, :, 0] * 0.0) + 1e10
            far = (xyz[:, 0, 0] * 0.0).long()
            chosen = []
            for _ in range(m):
                chosen.append(far)
                d = ((xyz - xyz.gather(1, far.view(-1, 1, 1).expand(-1, 1, 3))) ** 2).sum(-1)
                dist = torch.minimum(dist, d)
                far = dist.argmax(-1)
            return torch.stack(chosen, 1)

        class Grouping(nn.Module):
            def __init__(self, m=24, k=12, r2=0.5):
                super().__init__()
                self.m, self.k, self.r2 = m, k, r2
                self.mlp = nn.Sequential(nn.Conv2d(3, 24, 1, bias=False), nn.BatchNorm2d(24), nn.ReLU(inplace=True),
                                         nn.Conv2d(24, 48, 1, bias=False), nn.BatchNorm2d(48), nn.ReLU(inplace=True))
                self.fc = nn.Linear(48, classes)

            def forward(self, xyz):
                with torch.no_grad():
                    idx_c = fps(xyz, self.m)
                c = gather_points(xyz, idx_c)
                d = ((c.unsqueeze(2) - xyz.unsqueeze(1)) ** 2).sum(-1)
                dk, idx = d.topk(self.k, dim=-1, largest=False)
                idx = torch.where(dk > self.r2, idx[:, :, :1].expand(-1, -1, self.k), idx)
                g = gather_points(xyz, idx) - c.unsqueeze(2)
                h = self.mlp(g.permute(0, 3, 1, 2)).max(dim=-1)[0]
                return self.fc(h.max(dim=-1)[0])
        return Grouping()
    if name == "gatv2_index_softmax":
        g = torch.Generator().manual_seed(5)
        src = torch.cat([torch.randint(0, 40, (120,), generator=g), torch.arange(40)])
        dst = torch.cat([torch.randint(0, 40, (120,), generator=g), torch.arange(40)])

        class GatV2(nn.Module):
            def __init__(self, heads=2, co=16):
                super().__init__()
                self.h, self.co = heads, co
                self.wl, self.wr = nn.Linear(12, heads * co), nn.Linear(12, heads * co)
                self.we = nn.Linear(6, heads * co, bias=False)
                self.att = nn.Parameter(torch.randn(heads, co) * 0.1)
                self.register_buffer("src", src, persistent=False)
                self.register_buffer("dst", dst, persistent=False)
                self.fc = nn.Linear(heads * co, classes)

            def forward(self, x, e):
                b, n, ne = x.shape[0], x.shape[1], e.shape[1]
                xl = self.wl(x).view(b, n, self.h, self.co)
                xr = self.wr(x).view(b, n, self.h, self.co)
                xj = xl.index_select(1, self.src)
                m = xj + xr.index_select(1, self.dst) + self.we(e).view(b, ne, self.h, self.co)
                logit = (F.leaky_relu(m, 0.2) * self.att).sum(-1)
                a = (logit - logit.detach().amax(dim=1, keepdim=True)).exp()
                den = x.new_zeros((b, n, self.h)).index_add(1, self.dst, a)
                alpha = a / (den.index_select(1, self.dst) + 1e-16)
                out = x.new_zeros((b, n, self.h, self.co)).index_add(1, self.dst, xj * alpha.unsqueeze(-1))
                return self.fc(F.elu(out.reshape(b, n, -1)).mean(dim=1))
        return GatV2()
    if name == "fn_relu_resblocks":
        class BasicBlock(nn.Module):  # torchvision's, with the ReLUs as calls
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
                self.bn1 = nn.BatchNorm2d(cout)
                self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
                self.bn2 = nn.BatchNorm2d(cout)
                self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                             if stride != 1 or cin != cout else None)

            def forward(self, x):
                out = F.relu(self.bn1(self.conv1(x)), inplace=True)
                out = self.bn2(self.conv2(out))
                out += x if self.down is None else self.down(x)
                return F.relu(out, inplace=True)

        class ResNetFn(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
                self.bn = nn.BatchNorm2d(16)
                self.layer1 = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 16, 1))
                self.layer2 = BasicBlock(16, 32, 2)
                self.shared = BasicBlock(32, 32, 1)  # called twice
                self.fc = nn.Linear(32, classes)

            def forward(self, x):
                x = F.relu(self.bn(self.conv(x)), inplace=True)
                x = self.shared(self.shared(self.layer2(self.layer1(x))))
                return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
        return ResNetFn()
    if name == "method_inplace_disc":
        class DownBlock(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 3, 1, 1, bias=False)
                self.bn = nn.BatchNorm2d(c)

            def forward(self, x):
                return F.leaky_relu_(self.bn(self.conv(x)), 0.2)

        class Disc(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 32, 4, 2, 1)
                self.c2 = nn.Conv2d(32, 64, 4, 2, 1, bias=False)
                self.bn2 = nn.BatchNorm2d(64)
                self.block = DownBlock(64)  # called twice
                self.c3 = nn.Conv2d(64, 96, 4, 2, 1, bias=False)
                self.bn3 = nn.BatchNorm2d(96)
                self.fc = nn.Linear(96 * 16, classes)

            def forward(self, x):
                x = self.c1(x).relu_()
                x = F.leaky_relu_(self.bn2(self.c2(x)), 0.2)
                x = self.block(self.block(x))
                x = F.hardtanh_(self.bn3(self.c3(x)), -2.0, 2.0)
                return self.fc(x.flatten(1))
        return Disc()
    if name == "fn_act_mlp":
        class LnBlock(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.ln = nn.LayerNorm(d)
                self.fc = nn.Linear(d, d)

            def forward(self, x):
                return self.fc(F.leaky_relu(self.ln(x), 0.1, inplace=True))

        class ActMlp(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(64, 256)
                self.bn = nn.BatchNorm1d(256)
                self.block = LnBlock(256)  # called twice
                self.head = nn.Linear(256, classes)

            def forward(self, x):
                h = self.block(self.block(F.elu(self.bn(self.fc1(x)), inplace=True)))
                return self.head(F.silu(h, inplace=True))
        return ActMlp()
    if name == "select_fold_views":
        class SelectFoldViews(nn.Module):
            def __init__(self, d=48):
                super().__init__()
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                self.head = nn.Linear(d, classes)

            def forward(self, x):
                b, t, d = x.shape
                qkv = self.qkv(x).reshape(b, t, 3, d)
                q, k, v = (qkv[:, :, i].reshape(b * t, d) for i in range(3))
                y = self.o(torch.sigmoid(q) * torch.tanh(k) * v).reshape(b, t, d)
                return self.head(y.mean(dim=1))
        return SelectFoldViews()
    if name == "chunk_fold_copy":
        class ChunkFoldCopy(nn.Module):
            def __init__(self, d=48, heads=4):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.head = nn.Linear(32 * d, classes)
                self.side = nn.Linear(d, classes)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                q, k = (z.view(b, t, self.heads, d // self.heads).reshape(b, t * d) for z in (q, k))
                return self.head(q * k) + self.side(v.sum(dim=1))
        return ChunkFoldCopy()
    if name == "shared_layer_chunks":
        class SharedLayer(nn.Module):
            def __init__(self, d=64, heads=4, ff=128):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                self.ln1 = nn.LayerNorm(d)
                self.ff1 = nn.Linear(d, ff)
                self.ff2 = nn.Linear(ff, d)
                self.ln2 = nn.LayerNorm(d)

            def forward(self, x):
                b, t, d = x.shape
                h = self.heads
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                q = q.view(b, t, h, d // h).transpose(1, 2)
                k = k.view(b, t, h, d // h).transpose(1, 2)
                v = v.view(b, t, h, d // h).transpose(1, 2)
                a = (q @ k.transpose(-2, -1) / (d // h) ** 0.5).softmax(dim=-1)
                y = (a @ v).transpose(1, 2).reshape(b, t, d)
                x = self.ln1(x + self.o(y))
                return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))

        class SharedLayerNet(nn.Module):
            def __init__(self, d=64):
                super().__init__()
                self.embed = nn.Linear(24, 16)
                self.proj = nn.Linear(16, d)
                self.layer = SharedLayer(d)
                self.head = nn.Linear(d, classes)

            def forward(self, x):
                x = self.proj(self.embed(x))
                for _ in range(3):
                    x = self.layer(x)
                return self.head(x[:, 0])
        return SharedLayerNet()
    if name == "detach_vq_codes":
        class VQCodes(nn.Module):
            def __init__(self, d=48, codes=256):
                super().__init__()
                self.enc = nn.Sequential(nn.Conv2d(1, 24, 4, 2, 1), nn.ReLU(), nn.Conv2d(24, d, 3, 1, 1))
                self.codebook = nn.Parameter(torch.randn(codes, d) * 0.1)
                self.dec = nn.Sequential(nn.Conv2d(d, 24, 3, 1, 1), nn.ReLU(), nn.ConvTranspose2d(24, classes, 4, 2, 1))

            def forward(self, x):
                z = self.enc(x).permute(0, 2, 3, 1)  # [B, H, W, d]
                dist = (z.pow(2).sum(-1, keepdim=True) - 2 * z @ self.codebook.t() + self.codebook.pow(2).sum(1))
                q = self.codebook[dist.argmin(dim=-1)]
                loss = (q - z.detach()).pow(2).mean() + 0.25 * (q.detach() - z).pow(2).mean()
                zq = z + (q - z).detach()
                return self.dec(zq.permute(0, 3, 1, 2)) + loss
        return VQCodes()
    if name == "detach_target_expr":
        class TargetExpr(nn.Module):
            def __init__(self, d=256, hidden=1024):
                super().__init__()
                self.enc = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, d))
                self.w1 = nn.Parameter(torch.randn(d, hidden) * 0.03)
                self.w2 = nn.Parameter(torch.randn(hidden, d) * 0.03)
                self.pred = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                h = self.enc(x)
                t = F.normalize(F.gelu(h @ self.w1) @ self.w2, dim=1).detach()
                p = F.normalize(self.pred(h), dim=1)
                return self.fc(h) + (2 - 2 * (p * t).sum(dim=1, keepdim=True))
        return TargetExpr()
    if name == "stopgrad_predictor":
        class SimSiam(nn.Module):
            def __init__(self, d=256):
                super().__init__()
                self.enc = nn.Sequential(
                    nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(),
                    nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
                self.proj = nn.Sequential(nn.Linear(32, d), nn.BatchNorm1d(d), nn.ReLU(), nn.Linear(d, d))
                self.pred = nn.Sequential(nn.Linear(d, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, d))
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                z1, z2 = self.proj(self.enc(x)), self.proj(self.enc(x.transpose(2, 3)))
                p1, p2 = self.pred(z1), self.pred(z2)
                d = F.cosine_similarity(p1, z2.detach(), dim=1) + F.cosine_similarity(p2, z1.detach(), dim=1)
                return self.fc(z1) - d.unsqueeze(1) / 2
        return SimSiam()
    if name.startswith("ckpt_"):
        import torch.utils.checkpoint as ckpt
        reentrant = name.endswith("_reentrant")

        class Mlp(nn.Module):
            def __init__(self, d=256):
                super().__init__()
                self.fc1, self.act, self.fc2 = nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)

            def forward(self, x):
                return x + self.fc2(self.act(self.fc1(x)))

        class Attn(nn.Module):  # post-norm, ReLU feed-forward with dropout
            def __init__(self, d=64, h=4):
                super().__init__()
                self.att = nn.MultiheadAttention(d, h, batch_first=True)
                self.ff = nn.Sequential(nn.Linear(d, 3 * d), nn.ReLU(), nn.Dropout(0.1), nn.Linear(3 * d, d))
                self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)

            def forward(self, x):
                x = self.n1(x + self.att(x, x, x, need_weights=False)[0])
                return self.n2(x + self.ff(x))

        def conv_block(c):
            return nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c), nn.ReLU(),
                                 nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c), nn.ReLU())

        class Checkpointed(nn.Module):
            def __init__(self):
                super().__init__()
                if name.startswith("ckpt_mlp"):
                    self.stem, self.blocks, self.head = nn.Linear(256, 256), nn.ModuleList(
                        Mlp() for _ in range(4)), nn.Linear(256, classes)
                elif name.startswith("ckpt_transformer"):
                    self.stem, self.blocks = nn.Linear(64, 64), nn.ModuleList(Attn() for _ in range(3))
                    self.head = nn.Sequential(nn.LayerNorm(64), nn.Flatten(), nn.Linear(48 * 64, classes))
                else:
                    self.stem, self.blocks = nn.Conv2d(16, 32, 3, 1, 1), nn.ModuleList(conv_block(32) for _ in range(3))
                    self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, classes))

            def forward(self, x):
                x = self.stem(x)
                for blk in self.blocks:
                    x = ckpt.checkpoint(blk, x, use_reentrant=reentrant)
                return self.head(x)

        class Sequential(nn.Module):  # checkpoint_sequential: 3 segments of 2 blocks, the last run plainly
            def __init__(self):
                super().__init__()
                self.stem = nn.Linear(256, 256)
                self.body = nn.Sequential(*(Mlp() for _ in range(6)))
                self.head = nn.Linear(256, classes)

            def forward(self, x):
                return self.head(ckpt.checkpoint_sequential(self.body, 3, self.stem(x)))
        return Sequential() if name == "ckpt_sequential" else Checkpointed()
    raise ValueError(name)


def add_frozen_metadata(path: str, module) -> None:
    """metadata_props "oomguard.frozen" in the exported file, as oomguard.export writes it."""
    import export_hints  # the package's pure-Python files alone: its built extension is not needed
    add = export_hints.package_module("_export").add_frozen_metadata
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(add(data, module))


def add_export_hints(path: str, module, name: str) -> None:
    """The exported file with the metadata oomguard.export writes (tools/export_hints.py; one eager forward of
    a batch of 2 finds "oomguard.no_grad" / "oomguard.detached")."""
    import export_hints
    with open(path, "rb") as f:
        data = f.read()
    data = export_hints.add_export_hints(data, module, export_hints.example_inputs(CASES[name][0]),
                                         export_hints.zoo_reexport(module, CASES[name][0]))
    with open(path, "wb") as f:
        f.write(data)


def add_locals_metadata(src: str, dst: str, module, name: str) -> None:
    """dst: src with "oomguard.locals" as oomguard.export writes it (one eager forward of a batch of 2)."""
    import export_hints
    with open(src, "rb") as f:
        data = f.read()
    data = export_hints.package_module("frame_locals").add_locals_metadata(
        data, module, export_hints.example_inputs(CASES[name][0]))
    with open(dst, "wb") as f:
        f.write(data)


def spec(name: str):
    import torch
    import models
    inputs, classes, label_shape, batches, _ = CASES[name]
    return models.ModelSpec(name, "family probe " + name, lambda: build(name, classes),
                            tuple(models.InputSpec(n, s, getattr(torch, d), high=h) for n, s, d, h in inputs),
                            classes, label_shape=tuple(label_shape), in_zoo=False, validation_batches=(batches[0],))


def child(name: str, batch: int) -> int:
    sys.path.insert(0, HERE)
    import measure_step
    measure_step.reexec_with_tracker(None)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    torch.set_num_threads(1)
    rec = measure_step.measure(spec(name), batch, CASES[name][4], measure_step.Tracker())
    print(json.dumps({k: rec[k] for k in ("peak_live_bytes", "peak_phase", "saved_tensor_bytes")}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    parser.add_argument("--cases", help="comma-separated (default: all)")
    parser.add_argument("--work", default="/tmp/oomguard_families", help="where the exported .onnx files go")
    parser.add_argument("--out", help="write the rows as JSON here")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--store", action="store_true", help="keep the cases' ONNX and measurements in tests/data/plan")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], int(args.child[1]))
    if args.list:
        for name, (inputs, classes, label, batches, opt) in CASES.items():
            print("%-16s inputs %s classes %d label %s batches %s %s" % (name, inputs, classes, label, batches, opt))
        return 0
    names = args.cases.split(",") if args.cases else list(CASES)
    bad = [n for n in names if n not in CASES]
    if bad:
        print("probe_families: unknown case %s (--list)" % ", ".join(bad), file=sys.stderr)
        return 2
    if not os.access(args.oomguard, os.X_OK):
        print("probe_families: %s is not an executable oomguard" % args.oomguard, file=sys.stderr)
        return 2
    sys.path.insert(0, HERE)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    import export_zoo
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for name in names:
        # torch.utils.checkpoint traced as oomguard.export traces it (use_reentrant=True does not export otherwise)
        import export_hints
        with export_hints.package_module("checkpoint").traced_checkpoints():
            export_zoo.export_one(spec(name), args.work, 14, require_inferred_output=False)
        onnx_path = os.path.join(args.work, name + ".onnx")
        variants = {}  # another plan of each row: its name -> (model file, extra arguments)
        if name in FROZEN:
            # The plain export (what torch.onnx.export writes) is the row planned without the feature; the
            # stored file carries "oomguard.frozen" as oomguard.export writes it; --frozen on the plain one.
            import shutil
            plain = os.path.join(args.work, name + "_plain.onnx")
            shutil.copyfile(onnx_path, plain)
            add_frozen_metadata(onnx_path, spec(name).build())
            variants = {"plain": (plain, []), "flag": (plain, ["--frozen", ",".join(FROZEN[name])])}
        if name in GRAD_MODE:
            import shutil
            plain = os.path.join(args.work, name + "_plain.onnx")
            shutil.copyfile(onnx_path, plain)
            add_export_hints(onnx_path, spec(name).build(), name)
            variants = {"plain": (plain, []), "flag": (plain, GRAD_MODE[name])}
        if name in CHECKPOINTED:
            import shutil
            plain = os.path.join(args.work, name + "_plain.onnx")
            shutil.copyfile(onnx_path, plain)
            add_export_hints(onnx_path, spec(name).build(), name)
            variants = {"plain": (plain, []), "flag": (plain, CHECKPOINTED[name])}
        if name in LOCALS:
            with_locals = os.path.join(args.work, name + "_locals.onnx")
            add_locals_metadata(onnx_path, with_locals, spec(name).build(), name)
            variants["locals"] = (with_locals, [])
        for batch in CASES[name][3]:
            out = subprocess.run([sys.executable, __file__, "--child", name, str(batch)], capture_output=True,
                                 text=True, check=True).stdout.strip().splitlines()[-1]
            rec = json.loads(out)
            def plan_of(path, extra):
                return json.loads(subprocess.run(
                    [args.oomguard, "plan", path, "--target", "cpu", "--batch", str(batch), "--optimizer",
                     CASES[name][4], "--loss", "cross_entropy", "--json"] + extra,
                    capture_output=True, text=True, check=True).stdout)
            plan = plan_of(onnx_path, [])
            row = {"model": name, "batch": batch, "optimizer": CASES[name][4], "measured_peak": rec["peak_live_bytes"],
                   "measured_phase": rec["peak_phase"], "planned_peak": plan["peak_allocated_bytes"],
                   "planned_phase": plan.get("peak_phase"),
                   "measured_saved": rec["saved_tensor_bytes"], "planned_saved": plan["bytes"]["activations_saved"],
                   "warnings": len(plan.get("warnings", [])), "risks": plan.get("risks", [])}
            row["peak_error_pct"] = round(100.0 * (row["planned_peak"] - row["measured_peak"]) / row["measured_peak"], 3)
            for variant, (path, extra) in variants.items():
                other = plan_of(path, extra)["peak_allocated_bytes"]
                row["planned_peak_" + variant] = other
                row["peak_error_pct_" + variant] = round(100.0 * (other - row["measured_peak"]) / row["measured_peak"], 3)
                print("    %s: plan %10d (%+.2f%%)" % (variant, other, row["peak_error_pct_" + variant]))
            rows.append(row)
            print("%-16s b=%-3d peak %10d plan %10d (%+.2f%%) [%s/%s]  saved %10d plan %10d (%+d)" % (
                name, batch, row["measured_peak"], row["planned_peak"], row["peak_error_pct"], row["measured_phase"],
                row["planned_phase"], row["measured_saved"], row["planned_saved"],
                row["planned_saved"] - row["measured_saved"]), flush=True)
    if args.store:
        import shutil
        data = os.path.join(ROOT, "tests", "data", "plan")
        path = os.path.join(data, "family_probes.json")
        stored = {"torch_version": torch.__version__, "command": "/usr/bin/python3 tools/probe_families.py --store",
                  "cases": {}}
        if os.path.exists(path):
            with open(path) as f:
                stored = json.load(f)
        for name in names:
            shutil.copyfile(os.path.join(args.work, name + ".onnx"), os.path.join(data, "family_%s.onnx" % name))
            if name in LOCALS:
                shutil.copyfile(os.path.join(args.work, name + "_locals.onnx"),
                                os.path.join(data, "family_%s_locals.onnx" % name))
            stored["cases"][name] = {"onnx": "family_%s.onnx" % name, "optimizer": CASES[name][4], "rows": [
                {k: r[k] for k in ("batch", "measured_peak", "measured_phase", "measured_saved")}
                for r in rows if r["model"] == name]}
        with open(path, "w") as f:
            json.dump(stored, f, indent=1, sort_keys=True)
            f.write("\n")
    if args.out:
        write_rows(args.out, "tools/probe_families.py", rows)
    return 0


def write_rows(path, tool, rows):
    """The measured probe rows as a results file with date, machine, load, torch version and command."""
    import torch
    with open(path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "machine": platform.node(),
                   "cpus": os.cpu_count(), "load": os.getloadavg()[0], "torch_version": torch.__version__,
                   "command": "/usr/bin/python3 " + tool + " " + " ".join(sys.argv[1:]),
                   "development_data": True, "rows": rows}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
