#!/usr/bin/python3
"""Operator knowledge as data, generated from PyTorch: data/op_table.json.

For every op in OPS (an nn module or a call), this script
  (a) exports the op alone with torch.onnx.export (TRAINING mode, do_constant_folding=False,
      opset 13, into memory) and records the ONNX node types it becomes, in graph order (`pattern`);
  (b) runs it forward + backward on real tensors at batch 2 and 4 under
      torch.autograd.graph.saved_tensors_hooks and records the unique storages autograd keeps
      (by storage data_ptr), each classified as input / output / input_output (an in-place or view
      output sharing the input's storage) / parameter / other (an intermediate of the op), with its
      bytes per sample (the slope between the two batches) and its fixed bytes.

Every float input is fed through `x + pre<i>` (a 1-element parameter; Add saves nothing) so that it
requires grad as it would inside a network; the pattern leaves that Add out.

    /usr/bin/python3 tools/gen_op_table.py                  # writes data/op_table.json (~1 min)
    /usr/bin/python3 tools/gen_op_table.py --check          # regenerates SAMPLE rows, exit 1 on drift
                                                            # (and checks them at batch 3, not measured)
    /usr/bin/python3 tools/gen_op_table.py --compare-planner --oomguard build/oomguard \
        --out bench/results/op_table_vs_planner.json        # the planner's gaps, per op
    ... --compare-planner --gate bench/results/op_table_vs_planner.json --out /tmp/x.json
        # exit 1 when an op that agrees in the committed report no longer agrees
    /usr/bin/python3 tools/gen_op_table.py --self-test      # the checker's own verdicts (no planner needed)

Exit status: 0 ok, 1 drift / regression, 2 bad usage.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TABLE = os.path.join(ROOT, "data", "op_table.json")
OPSET = 13
# An op that torch cannot export at OPSET is tried at each later opset up to MAX_OPSET (users export with
# newer opsets too: tril becomes Trilu at 14); the row records the opset it exported at.
MAX_OPSET = 17
BATCHES = (2, 4)
PLAN_BATCH = 3  # the planner (and --check) at batches the table was not measured at
PLAN_BATCHES = (PLAN_BATCH, 6)
# Relative tolerance for "the planner agrees" (saved bytes are exact integers on both sides).
AGREE_TOL = 0.01
# A disagreement of at most this many bytes is reported as "small" (still a gap, not gated).
SMALL_GAP_BYTES = 64

# name, call (an expression giving an nn.Module or a callable), inputs per sample.
# Input spec: "f:D,D" float32, "i:HIGH:D,D" int64 in [0, HIGH), "b:D,D" bool (seeded).
OPS = [
    # --- linear / convolution
    ("linear", "nn.Linear(32, 16)", ["f:32"]),
    ("linear_nobias", "nn.Linear(32, 16, bias=False)", ["f:32"]),
    ("linear_3d", "nn.Linear(32, 16)", ["f:5,32"]),
    ("bilinear", "nn.Bilinear(8, 6, 4)", ["f:8", "f:6"]),
    ("conv1d", "nn.Conv1d(4, 8, 3, padding=1)", ["f:4,32"]),
    ("conv1d_stride2", "nn.Conv1d(4, 8, 5, stride=2)", ["f:4,32"]),
    ("conv1d_depthwise", "nn.Conv1d(8, 8, 3, groups=8, padding=1)", ["f:8,32"]),
    ("conv2d", "nn.Conv2d(4, 8, 3, padding=1)", ["f:4,12,12"]),
    ("conv2d_nobias", "nn.Conv2d(4, 8, 3, padding=1, bias=False)", ["f:4,12,12"]),
    ("conv2d_1x1", "nn.Conv2d(8, 16, 1)", ["f:8,12,12"]),
    ("conv2d_stride2", "nn.Conv2d(4, 8, 3, stride=2, padding=1)", ["f:4,12,12"]),
    ("conv2d_dilated", "nn.Conv2d(4, 8, 3, padding=2, dilation=2)", ["f:4,12,12"]),
    ("conv2d_grouped", "nn.Conv2d(8, 8, 3, groups=2, padding=1)", ["f:8,12,12"]),
    ("conv2d_depthwise", "nn.Conv2d(8, 8, 3, groups=8, padding=1)", ["f:8,12,12"]),
    ("conv2d_rgb", "nn.Conv2d(3, 8, 3, padding=1)", ["f:3,12,12"]),
    ("conv3d", "nn.Conv3d(4, 8, 3, padding=1)", ["f:4,6,6,6"]),
    ("conv3d_depthwise", "nn.Conv3d(8, 8, 3, groups=8, padding=1)", ["f:8,6,6,6"]),
    ("conv_transpose1d", "nn.ConvTranspose1d(4, 8, 4, stride=2, padding=1)", ["f:4,16"]),
    ("conv_transpose2d", "nn.ConvTranspose2d(4, 8, 4, stride=2, padding=1)", ["f:4,8,8"]),
    ("conv_transpose2d_k2", "nn.ConvTranspose2d(8, 4, 2, stride=2)", ["f:8,8,8"]),
    ("conv_transpose3d", "nn.ConvTranspose3d(4, 4, 2, stride=2)", ["f:4,4,4,4"]),
    # --- normalization
    ("batch_norm1d", "nn.BatchNorm1d(16)", ["f:16"]),
    ("batch_norm1d_seq", "nn.BatchNorm1d(8)", ["f:8,20"]),
    ("batch_norm2d", "nn.BatchNorm2d(8)", ["f:8,10,10"]),
    ("batch_norm2d_noaffine", "nn.BatchNorm2d(8, affine=False)", ["f:8,10,10"]),
    ("batch_norm3d", "nn.BatchNorm3d(4)", ["f:4,6,6,6"]),
    ("layer_norm", "nn.LayerNorm(32)", ["f:10,32"]),
    ("layer_norm_noaffine", "nn.LayerNorm(32, elementwise_affine=False)", ["f:10,32"]),
    ("layer_norm_2d", "nn.LayerNorm([8, 8])", ["f:4,8,8"]),
    ("group_norm", "nn.GroupNorm(4, 8)", ["f:8,10,10"]),
    ("group_norm_noaffine", "nn.GroupNorm(2, 8, affine=False)", ["f:8,10,10"]),
    ("instance_norm1d", "nn.InstanceNorm1d(8)", ["f:8,20"]),
    ("instance_norm2d", "nn.InstanceNorm2d(8)", ["f:8,10,10"]),
    ("instance_norm2d_affine", "nn.InstanceNorm2d(8, affine=True)", ["f:8,10,10"]),
    ("instance_norm3d", "nn.InstanceNorm3d(4)", ["f:4,6,6,6"]),
    ("local_response_norm", "nn.LocalResponseNorm(3)", ["f:8,10,10"]),
    ("normalize", "lambda x: F.normalize(x, dim=1)", ["f:32"]),
    # --- activations
    ("relu", "nn.ReLU()", ["f:8,10,10"]),
    ("relu_inplace", "nn.ReLU(inplace=True)", ["f:8,10,10"]),
    ("relu6", "nn.ReLU6()", ["f:8,10,10"]),
    ("relu6_inplace", "nn.ReLU6(inplace=True)", ["f:8,10,10"]),
    ("leaky_relu", "nn.LeakyReLU(0.1)", ["f:8,10,10"]),
    ("leaky_relu_inplace", "nn.LeakyReLU(0.1, inplace=True)", ["f:8,10,10"]),
    ("prelu", "nn.PReLU()", ["f:8,10,10"]),
    ("prelu_channels", "nn.PReLU(8)", ["f:8,10,10"]),
    ("rrelu_eval_slope", "nn.RReLU()", ["f:64"]),
    ("elu", "nn.ELU()", ["f:8,10,10"]),
    ("elu_inplace", "nn.ELU(inplace=True)", ["f:8,10,10"]),
    ("selu", "nn.SELU()", ["f:8,10,10"]),
    ("selu_inplace", "nn.SELU(inplace=True)", ["f:8,10,10"]),
    ("celu", "nn.CELU()", ["f:8,10,10"]),
    ("celu_inplace", "nn.CELU(inplace=True)", ["f:8,10,10"]),
    ("gelu", "nn.GELU()", ["f:8,10,10"]),
    ("gelu_tanh", "nn.GELU(approximate='tanh')", ["f:8,10,10"]),
    ("silu", "nn.SiLU()", ["f:8,10,10"]),
    ("silu_inplace", "nn.SiLU(inplace=True)", ["f:8,10,10"]),
    ("mish", "nn.Mish()", ["f:8,10,10"]),
    ("mish_inplace", "nn.Mish(inplace=True)", ["f:8,10,10"]),
    ("hardswish", "nn.Hardswish()", ["f:8,10,10"]),
    ("hardswish_inplace", "nn.Hardswish(inplace=True)", ["f:8,10,10"]),
    ("hardsigmoid", "nn.Hardsigmoid()", ["f:8,10,10"]),
    ("hardsigmoid_inplace", "nn.Hardsigmoid(inplace=True)", ["f:8,10,10"]),
    ("hardtanh", "nn.Hardtanh()", ["f:8,10,10"]),
    ("hardtanh_inplace", "nn.Hardtanh(inplace=True)", ["f:8,10,10"]),
    ("hardshrink", "nn.Hardshrink()", ["f:64"]),
    ("softshrink", "nn.Softshrink()", ["f:64"]),
    ("tanhshrink", "nn.Tanhshrink()", ["f:64"]),
    ("softsign", "nn.Softsign()", ["f:64"]),
    ("softplus", "nn.Softplus()", ["f:8,10,10"]),
    ("sigmoid", "nn.Sigmoid()", ["f:8,10,10"]),
    ("log_sigmoid", "nn.LogSigmoid()", ["f:64"]),
    ("tanh", "nn.Tanh()", ["f:8,10,10"]),
    ("threshold", "nn.Threshold(0.1, 0.0)", ["f:64"]),
    ("threshold_where", "lambda x: torch.where(x > 0.1, x, torch.zeros_like(x))", ["f:64"]),
    ("glu", "nn.GLU()", ["f:64"]),
    ("softmax", "nn.Softmax(dim=-1)", ["f:10,32"]),
    ("log_softmax", "nn.LogSoftmax(dim=-1)", ["f:10,32"]),
    ("softmin", "nn.Softmin(dim=-1)", ["f:10,32"]),
    ("softmax2d", "nn.Softmax2d()", ["f:8,10,10"]),
    # --- pooling
    ("max_pool1d", "nn.MaxPool1d(2)", ["f:8,32"]),
    ("max_pool2d", "nn.MaxPool2d(2)", ["f:8,12,12"]),
    ("max_pool2d_k3s2", "nn.MaxPool2d(3, stride=2, padding=1)", ["f:8,12,12"]),
    ("max_pool3d", "nn.MaxPool3d(2)", ["f:4,6,6,6"]),
    ("avg_pool1d", "nn.AvgPool1d(2)", ["f:8,32"]),
    ("avg_pool2d", "nn.AvgPool2d(2)", ["f:8,12,12"]),
    ("avg_pool2d_padded", "nn.AvgPool2d(3, stride=1, padding=1)", ["f:8,12,12"]),
    ("avg_pool3d", "nn.AvgPool3d(2)", ["f:4,6,6,6"]),
    ("lp_pool2d", "nn.LPPool2d(2, 2)", ["f:8,12,12"]),
    ("adaptive_avg_pool1d", "nn.AdaptiveAvgPool1d(1)", ["f:8,32"]),
    ("adaptive_avg_pool2d_1", "nn.AdaptiveAvgPool2d(1)", ["f:8,12,12"]),
    ("adaptive_avg_pool2d_3", "nn.AdaptiveAvgPool2d(3)", ["f:8,12,12"]),
    ("adaptive_avg_pool3d", "nn.AdaptiveAvgPool3d(1)", ["f:4,6,6,6"]),
    ("adaptive_max_pool1d", "nn.AdaptiveMaxPool1d(1)", ["f:8,32"]),
    ("adaptive_max_pool2d", "nn.AdaptiveMaxPool2d(1)", ["f:8,12,12"]),
    ("adaptive_max_pool3d", "nn.AdaptiveMaxPool3d(1)", ["f:4,6,6,6"]),
    ("pixel_shuffle", "nn.PixelShuffle(2)", ["f:8,6,6"]),
    ("pixel_unshuffle", "nn.PixelUnshuffle(2)", ["f:2,6,6"]),
    # --- resampling
    ("upsample_nearest2d", "nn.Upsample(scale_factor=2, mode='nearest')", ["f:4,8,8"]),
    ("upsample_bilinear2d", "nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)", ["f:4,8,8"]),
    ("upsample_bilinear2d_ac", "nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)", ["f:4,8,8"]),
    ("upsample_bicubic2d", "nn.Upsample(scale_factor=2, mode='bicubic', align_corners=False)", ["f:4,8,8"]),
    ("upsample_nearest1d", "nn.Upsample(scale_factor=2, mode='nearest')", ["f:4,16"]),
    ("upsample_linear1d", "nn.Upsample(scale_factor=2, mode='linear', align_corners=False)", ["f:4,16"]),
    ("upsample_nearest3d", "nn.Upsample(scale_factor=2, mode='nearest')", ["f:2,4,4,4"]),
    ("upsample_trilinear3d", "nn.Upsample(scale_factor=2, mode='trilinear', align_corners=False)", ["f:2,4,4,4"]),
    ("interpolate_size", "lambda x: F.interpolate(x, size=(11, 13), mode='nearest')", ["f:4,8,8"]),
    # --- embeddings, recurrent, attention
    ("embedding", "nn.Embedding(50, 16)", ["i:50:10"]),
    ("embedding_padding", "nn.Embedding(50, 16, padding_idx=0)", ["i:50:10"]),
    ("embedding_bag_mean", "nn.EmbeddingBag(50, 16, mode='mean')", ["i:50:10"]),
    ("lstm", "nn.LSTM(16, 24, batch_first=True)", ["f:10,16"]),
    ("lstm_2layer", "nn.LSTM(16, 24, num_layers=2, batch_first=True)", ["f:10,16"]),
    ("lstm_bidirectional", "nn.LSTM(16, 24, batch_first=True, bidirectional=True)", ["f:10,16"]),
    ("gru", "nn.GRU(16, 24, batch_first=True)", ["f:10,16"]),
    ("gru_bidirectional", "nn.GRU(16, 24, batch_first=True, bidirectional=True)", ["f:10,16"]),
    ("rnn_tanh", "nn.RNN(16, 24, batch_first=True)", ["f:10,16"]),
    ("lstm_cell", "nn.LSTMCell(16, 24)", ["f:16"]),
    ("gru_cell", "nn.GRUCell(16, 24)", ["f:16"]),
    # the hidden state given (a recurrence after its first step: GRU-D, unseen set 15); the gates are
    # updated in place on CPU, so autograd keeps 6 x hidden per sample besides the inputs, not the 7 the nodes alone would
    ("gru_cell_hidden", "nn.GRUCell(16, 24)", ["f:16", "f:24"]),
    ("multihead_attention", "MHA(nn.MultiheadAttention(32, 4, batch_first=True))", ["f:10,32"]),
    ("multihead_attention_nodrop", "MHA(nn.MultiheadAttention(32, 4, batch_first=True, dropout=0.0, bias=False))",
     ["f:10,32"]),
    ("transformer_encoder_layer", "nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)",
     ["f:10,32"]),
    # --- dropout
    ("dropout", "nn.Dropout(0.5)", ["f:8,10,10"]),
    ("dropout_p0", "nn.Dropout(0.0)", ["f:64"]),
    ("dropout2d", "nn.Dropout2d(0.5)", ["f:8,10,10"]),
    ("alpha_dropout", "nn.AlphaDropout(0.5)", ["f:64"]),
    # feature dropout does not export in training mode at any opset; what a user exports instead
    ("dropout2d_decomposed", "lambda x: x * (torch.rand_like(x[:, :, :1, :1]) > 0.5).float() * 2.0", ["f:8,10,10"]),
    # --- losses (label inputs seeded; reduction mean)
    ("cross_entropy", "lambda x, y: F.cross_entropy(x, y)", ["f:10", "i:10:"]),
    ("cross_entropy_seq", "lambda x, y: F.cross_entropy(x, y)", ["f:10,6", "i:10:6"]),
    ("nll_loss", "lambda x, y: F.nll_loss(x, y)", ["f:10", "i:10:"]),
    ("mse_loss", "lambda x, y: F.mse_loss(x, y)", ["f:32", "f:32"]),
    ("l1_loss", "lambda x, y: F.l1_loss(x, y)", ["f:32", "f:32"]),
    ("smooth_l1_loss", "lambda x, y: F.smooth_l1_loss(x, y)", ["f:32", "f:32"]),
    ("huber_loss", "lambda x, y: F.huber_loss(x, y)", ["f:32", "f:32"]),
    # the losses above do not export at any opset (torch 1.13): their decompositions, as a user writes them
    ("mse_loss_decomposed", "lambda x, y: ((x - y) ** 2).mean()", ["f:32", "f:32"]),
    ("l1_loss_decomposed", "lambda x, y: (x - y).abs().mean()", ["f:32", "f:32"]),
    ("smooth_l1_loss_decomposed",
     "lambda x, y: (lambda d: (lambda a: torch.where(a < 1.0, 0.5 * d ** 2, a - 0.5))(d.abs()).mean())(x - y)",
     ["f:32", "f:32"]),
    ("bce_with_logits", "lambda x, y: F.binary_cross_entropy_with_logits(x, y)", ["f:32", "f:32"]),
    # reduction='none' (an auxiliary loss computed in forward: its export has no ReduceMean at the end)
    ("bce_with_logits_none", "lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction='none')",
     ["f:32", "f:32"]),
    ("bce", "lambda x, y: F.binary_cross_entropy(torch.sigmoid(x), torch.sigmoid(y))", ["f:32", "f:32"]),
    ("bce_decomposed", "lambda x, y: (lambda p, t: -(t * torch.log(p) + (1 - t) * torch.log(1 - p)).mean())("
     "torch.sigmoid(x), torch.sigmoid(y))", ["f:32", "f:32"]),
    ("kl_div", "lambda x, y: F.kl_div(F.log_softmax(x, -1), F.softmax(y, -1), reduction='batchmean')",
     ["f:32", "f:32"]),
    ("cosine_similarity", "lambda x, y: F.cosine_similarity(x, y)", ["f:32", "f:32"]),
    ("pairwise_distance", "lambda x, y: F.pairwise_distance(x, y)", ["f:32", "f:32"]),
    # --- matrix products
    ("matmul_2d_weight", "lambda a: torch.matmul(a, torch.ones(32, 16))", ["f:32"]),
    ("matmul_batched", "lambda a, b: torch.matmul(a, b)", ["f:8,16", "f:16,12"]),
    ("bmm", "lambda a, b: torch.bmm(a, b)", ["f:8,16", "f:16,12"]),
    ("einsum_bij_bjk", "lambda a, b: torch.einsum('bij,bjk->bik', a, b)", ["f:8,16", "f:16,12"]),
    ("einsum_outer", "lambda a, b: torch.einsum('bi,bj->bij', a, b)", ["f:8", "f:12"]),
    ("baddbmm", "lambda c, a, b: torch.baddbmm(c, a, b)", ["f:8,12", "f:8,16", "f:16,12"]),
    ("mv_like", "lambda a, v: torch.matmul(a, v.unsqueeze(-1)).squeeze(-1)", ["f:8,16", "f:16"]),
    # --- shape ops
    ("reshape", "lambda x: x.reshape(x.shape[0], -1)", ["f:8,10,10"]),
    ("view", "lambda x: x.view(x.shape[0], 8, 100)", ["f:8,10,10"]),
    ("flatten", "nn.Flatten()", ["f:8,10,10"]),
    ("unflatten", "nn.Unflatten(1, (8, 4))", ["f:32"]),
    ("unflatten_view", "lambda x: x.view(x.shape[0], 8, 4)", ["f:32"]),
    ("permute", "lambda x: x.permute(0, 2, 3, 1)", ["f:8,10,10"]),
    ("transpose", "lambda x: x.transpose(1, 2)", ["f:10,32"]),
    ("permute_contiguous", "lambda x: x.permute(0, 2, 1).contiguous()", ["f:10,32"]),
    ("squeeze", "lambda x: x.squeeze(1)", ["f:1,32"]),
    ("unsqueeze", "lambda x: x.unsqueeze(1)", ["f:32"]),
    ("expand", "lambda x: x.expand(-1, 8, -1) * 1.0", ["f:1,32"]),
    ("repeat", "lambda x: x.repeat(1, 3, 1)", ["f:4,32"]),
    ("slice", "lambda x: x[:, 2:7]", ["f:10,32"]),
    ("slice_step", "lambda x: x[:, ::2]", ["f:10,32"]),
    ("select", "lambda x: x[:, 0]", ["f:10,32"]),
    ("narrow", "lambda x: x.narrow(2, 4, 8)", ["f:10,32"]),
    ("gather", "lambda x, i: torch.gather(x, 1, i)", ["f:10,32", "i:10:4,32"]),
    ("index_select", "lambda x: torch.index_select(x, 1, torch.tensor([0, 2, 5, 7]))", ["f:10,32"]),
    ("index_tensor", "lambda x: x[:, torch.tensor([1, 3, 4])]", ["f:10,32"]),
    ("cat", "lambda a, b: torch.cat([a, b], dim=1)", ["f:8,10,10", "f:4,10,10"]),
    ("stack", "lambda a, b: torch.stack([a, b], dim=1)", ["f:32", "f:32"]),
    ("split", "lambda x: torch.split(x, 16, dim=1)", ["f:32,8"]),
    ("chunk", "lambda x: torch.chunk(x, 4, dim=1)", ["f:32,8"]),
    ("unbind", "lambda x: torch.unbind(x, dim=1)", ["f:3,8"]),
    ("pad_constant", "lambda x: F.pad(x, (1, 1, 2, 2))", ["f:4,8,8"]),
    ("pad_reflect", "nn.ReflectionPad2d(2)", ["f:4,8,8"]),
    ("pad_replicate", "nn.ReplicationPad2d(2)", ["f:4,8,8"]),
    ("roll", "lambda x: torch.roll(x, 2, dims=1)", ["f:32"]),
    ("flip", "lambda x: torch.flip(x, dims=[1])", ["f:32"]),
    ("tril", "lambda x: torch.tril(x)", ["f:8,8"]),
    ("triu", "lambda x: torch.triu(x, 1)", ["f:8,8"]),
    # --- selection (sort and argsort export as TopK)
    ("topk", "lambda x: torch.topk(x, 3, dim=-1)[0]", ["f:8,10"]),
    ("sort", "lambda x: torch.sort(x, dim=-1, descending=True)[0]", ["f:8,10"]),
    ("topk_smallest", "lambda x: torch.topk(x, 2, dim=1, largest=False)[0]", ["f:8,10"]),
    # --- reductions
    ("sum", "lambda x: x.sum()", ["f:8,10"]),
    ("sum_dim", "lambda x: x.sum(dim=1)", ["f:8,10"]),
    ("mean", "lambda x: x.mean()", ["f:8,10"]),
    ("mean_dim_keepdim", "lambda x: x.mean(dim=(2, 3), keepdim=True)", ["f:8,10,10"]),
    ("max_dim", "lambda x: x.max(dim=1)[0]", ["f:8,10"]),
    ("amax", "lambda x: torch.amax(x, dim=1)", ["f:8,10"]),
    ("min_dim", "lambda x: x.min(dim=1)[0]", ["f:8,10"]),
    ("amin", "lambda x: torch.amin(x, dim=1)", ["f:8,10"]),
    ("max_all", "lambda x: x.max()", ["f:8,10"]),
    ("prod_dim", "lambda x: x.prod(dim=1)", ["f:8,10"]),
    ("norm_l2", "lambda x: torch.norm(x, dim=1)", ["f:8,10"]),
    ("norm_l1", "lambda x: torch.norm(x, p=1, dim=1)", ["f:8,10"]),
    ("logsumexp", "lambda x: torch.logsumexp(x, dim=1)", ["f:8,10"]),
    ("var", "lambda x: torch.var(x, dim=1)", ["f:8,10"]),
    ("std", "lambda x: torch.std(x, dim=1)", ["f:8,10"]),
    # the population variance (unbiased=False) exports without the correction's Shape/ReduceProd; var_mean
    # keeps one mean for its output and one inside the variance (weight standardisation, hand-written norms)
    ("var_biased", "lambda x: torch.var(x, dim=1, unbiased=False)", ["f:8,10"]),
    ("var_mean_biased", "lambda x: torch.var_mean(x, dim=1, unbiased=False)", ["f:8,10"]),
    ("var_mean", "lambda x: torch.var_mean(x, dim=1)", ["f:8,10"]),
    # scatter and index_add (graph message passing): ONNX ScatterElements, its indices expanded for index_add
    ("scatter_add", "lambda x, i, s: x.scatter_add(1, i, s)", ["f:8,10", "i:8:5,10", "f:5,10"]),
    ("scatter", "lambda x, i, s: x.scatter(1, i, s)", ["f:8,10", "i:8:5,10", "f:5,10"]),
    ("index_add", "lambda x, s: x.index_add(1, torch.tensor([0, 2, 1]), s)", ["f:4,10", "f:3,10"]),
    # torch.nn.utils.weight_norm's w = g * v / ||v|| (one fused op in torch: it keeps v, g and the norms, not w)
    ("weight_norm", "lambda v, g: torch._weight_norm(v, g, 0)", ["f:8,10", "f:1,1"]),
    ("cumsum", "lambda x: torch.cumsum(x, dim=1)", ["f:32"]),
    # --- masking and selection
    ("masked_fill", "lambda x, m: x.masked_fill(m, 0.0)", ["f:10,32", "b:10,32"]),
    ("masked_fill_neg_inf_softmax", "lambda x, m: torch.softmax(x.masked_fill(m, float('-inf')), -1)",
     ["f:10,32", "b:10,32"]),
    ("where", "lambda c, a, b: torch.where(c, a, b)", ["b:32", "f:32", "f:32"]),
    ("clamp", "lambda x: torch.clamp(x, -0.5, 0.5)", ["f:64"]),
    ("clamp_min", "lambda x: torch.clamp(x, min=0.0)", ["f:64"]),
    ("maximum", "lambda a, b: torch.maximum(a, b)", ["f:64", "f:64"]),
    ("minimum", "lambda a, b: torch.minimum(a, b)", ["f:64", "f:64"]),
    # --- elementwise arithmetic
    ("add", "lambda a, b: a + b", ["f:64", "f:64"]),
    ("add_scalar", "lambda a: a + 1.0", ["f:64"]),
    ("add_broadcast", "lambda a, b: a + b", ["f:8,10,10", "f:8,1,1"]),
    ("sub", "lambda a, b: a - b", ["f:64", "f:64"]),
    ("mul", "lambda a, b: a * b", ["f:64", "f:64"]),
    ("mul_scalar", "lambda a: a * 3.0", ["f:64"]),
    ("mul_broadcast", "lambda a, b: a * b", ["f:8,10,10", "f:8,1,1"]),
    ("div", "lambda a, b: a / (b * b + 1.0)", ["f:64", "f:64"]),
    ("div_scalar", "lambda a: a / 3.0", ["f:64"]),
    ("neg", "lambda a: -a", ["f:64"]),
    ("pow_2", "lambda a: a.pow(2)", ["f:64"]),
    ("pow_3", "lambda a: a.pow(3)", ["f:64"]),
    ("pow_tensor", "lambda a, b: torch.pow(a.abs() + 1.0, b)", ["f:64", "f:64"]),
    ("sqrt", "lambda a: torch.sqrt(a.abs() + 1.0)", ["f:64"]),
    ("rsqrt", "lambda a: torch.rsqrt(a.abs() + 1.0)", ["f:64"]),
    ("exp", "lambda a: torch.exp(a)", ["f:64"]),
    ("log", "lambda a: torch.log(a.abs() + 1.0)", ["f:64"]),
    ("abs", "lambda a: torch.abs(a)", ["f:64"]),
    ("reciprocal", "lambda a: torch.reciprocal(a.abs() + 1.0)", ["f:64"]),
    ("sin", "lambda a: torch.sin(a)", ["f:64"]),
    ("cos", "lambda a: torch.cos(a)", ["f:64"]),
    ("erf", "lambda a: torch.erf(a)", ["f:64"]),
    ("atan", "lambda a: torch.atan(a)", ["f:64"]),
    ("sign_mul", "lambda a: torch.sign(a) * a", ["f:64"]),
    ("floor_passthrough", "lambda a: a + torch.floor(a).detach()", ["f:64"]),
    ("addcmul", "lambda a, b, c: torch.addcmul(a, b, c)", ["f:64", "f:64", "f:64"]),
    ("lerp", "lambda a, b: torch.lerp(a, b, 0.3)", ["f:64", "f:64"]),
    ("square", "lambda a: torch.square(a)", ["f:64"]),
]

# Rows regenerated by --check (the ctest) and compared with the committed table.
SAMPLE = ["linear", "conv2d", "batch_norm2d", "layer_norm", "gelu", "relu_inplace", "leaky_relu_inplace", "max_pool2d",
          "lstm", "embedding", "softmax", "cat", "masked_fill", "tril", "mse_loss_decomposed"]


# ---------------------------------------------------------------------------------------------


def _namespace():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Fn(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, *xs):
            return self.fn(*xs)

    class MHA(nn.Module):
        """Self-attention: query = key = value, the attention weights not returned."""

        def __init__(self, m):
            super().__init__()
            self.attn = m

        def forward(self, x):
            return self.attn(x, x, x, need_weights=False)[0]

    return {"torch": torch, "nn": nn, "F": F, "Fn": Fn, "MHA": MHA}


def build_op(call: str):
    ns = _namespace()
    obj = eval(call, ns)  # the calls are this file's own constants
    if not isinstance(obj, ns["nn"].Module):
        obj = ns["Fn"](obj)
    return obj


def parse_input(spec: str):
    kind, rest = spec.split(":", 1)
    high = None
    if kind == "i":
        high, rest = rest.split(":", 1)
        high = int(high)
    dims = [int(d) for d in rest.split(",") if d]
    return kind, high, dims


def make_inputs(specs, batch: int, seed: int):
    import torch
    g = torch.Generator().manual_seed(seed)
    out = []
    for s in specs:
        kind, high, dims = parse_input(s)
        shape = [batch] + dims
        if kind == "f":
            out.append(torch.randn(shape, generator=g))
        elif kind == "i":
            out.append(torch.randint(0, high, shape, generator=g))
        elif kind == "b":
            out.append(torch.rand(shape, generator=g) < 0.3)
        else:
            raise ValueError("bad input spec %r" % s)
    return out


def wrapped(op, specs):
    """op(x0 + pre0, ...): every float input requires grad, as it would inside a network."""
    import torch
    import torch.nn as nn

    class Wrapped(nn.Module):
        def __init__(self):
            super().__init__()
            self.op = op
            self.floats = [parse_input(s)[0] == "f" for s in specs]
            for i, f in enumerate(self.floats):
                if f:
                    self.register_parameter("pre%d" % i, nn.Parameter(torch.zeros(1)))

        def forward(self, *xs):
            ys = [x + getattr(self, "pre%d" % i) if f else x for i, (x, f) in enumerate(zip(xs, self.floats))]
            self.last_inputs = ys
            return self.op(*ys)

    return Wrapped()


def _flat_outputs(out):
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    res = []
    for o in out:
        res.extend(_flat_outputs(o))
    return res


def _storage(t):
    try:
        s = t.storage()
        return s.data_ptr(), s.nbytes()
    except Exception:
        return None


def measure_saved(name: str, call: str, specs, batch: int):
    """Unique storages autograd saves for op at `batch`: [(role, bytes)] in first-saved order."""
    import torch
    torch.manual_seed(1234)
    model = wrapped(build_op(call), specs)
    model.train()
    xs = make_inputs(specs, batch, 99)
    params = {_storage(p)[0] for p in model.op.parameters()} | {_storage(b)[0] for b in model.op.buffers()}
    saved = {}  # data_ptr -> bytes, insertion ordered
    first = {}  # data_ptr -> (dtype, shape) of the first tensor saved on it
    packed = []

    def pack(t):
        k = _storage(t)
        if k is not None and k[0] not in saved:
            saved[k[0]] = k[1]
            first[k[0]] = (str(t.dtype).replace("torch.", ""), list(t.shape))
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(*xs)
    outs = [o for o in _flat_outputs(out) if o.requires_grad]
    ins = {_storage(t)[0] for t in model.last_inputs + xs if _storage(t)}
    # Which op input (x<i>, after the pre-Add) or output (y<j>) a storage is, first match wins.
    which = {}
    for i, t in enumerate(list(model.last_inputs) + list(xs)):
        if _storage(t):
            which.setdefault(_storage(t)[0], "x%d" % (i % len(xs)))
    for j, t in enumerate(_flat_outputs(out)):
        if _storage(t):
            which.setdefault(_storage(t)[0], "y%d" % j)
    # Integer/bool inputs reach the op as they are: in a one-op model they are graph inputs.
    raw = {_storage(x)[0] for x, s in zip(xs, specs) if parse_input(s)[0] != "f" and _storage(x)}
    outk = {_storage(t)[0] for t in _flat_outputs(out) if _storage(t)}
    entries = []
    for ptr, nbytes in saved.items():
        if ptr in params:
            role = "parameter"
        elif ptr in ins and ptr in outk:
            role = "input_output"
        elif ptr in ins:
            role = "input"
        elif ptr in outk:
            role = "output"
        else:
            role = "other"
        entries.append((role, nbytes, ptr in raw) + first[ptr] + (which.get(ptr),))
    if outs:
        torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
    return entries


def onnx_pattern(model_bytes: bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    pre = {i.name for i in m.graph.initializer if i.name.startswith("pre")}
    return [n.op_type for n in m.graph.node
            if not (n.op_type == "Add" and any(x in pre for x in n.input))]


def onnx_graph(model_bytes: bytes):
    """The pattern with its wiring: nodes (Constants and the pre-Adds left out), each with its op type and
    input references, and the op's outputs. A reference is "x<i>" (the op's input i), "n<k>.<j>" (output j
    of pattern node k), "p" (a parameter or buffer of the module), "c" (a constant) or "" (omitted); `attrs`
    holds a node's string attributes."""
    import onnx
    m = onnx.load_from_string(model_bytes)
    inits = {i.name for i in m.graph.initializer}
    ref = {}
    for g in m.graph.input:
        if g.name.startswith("x") and g.name[1:].isdigit():
            ref[g.name] = g.name
    nodes = []
    for n in m.graph.node:
        if n.op_type == "Add" and any(x.startswith("pre") and x in inits for x in n.input):
            src = [x for x in n.input if not (x.startswith("pre") and x in inits)]
            if src and src[0] in ref:
                ref[n.output[0]] = ref[src[0]]
            continue
        if n.op_type == "Constant":
            for o in n.output:
                ref[o] = "c"
            continue
        ins = []
        for x in n.input:
            if not x:
                ins.append("")
            elif x in ref:
                ins.append(ref[x])
            elif x in inits:
                ins.append("p" if x.startswith("op.") else "c")
            else:
                ins.append("?")
        k = len(nodes)
        for j, o in enumerate(n.output):
            ref[o] = "n%d.%d" % (k, j)
        node = {"op": n.op_type, "in": ins, "out": len(n.output)}
        # String attributes (Pad's mode, an RNN's direction) tell apart rows with the same wiring.
        attrs = {a.name: a.s.decode() for a in n.attribute if a.type == onnx.AttributeProto.STRING}
        if attrs:
            node["attrs"] = attrs
        nodes.append(node)
    return {"nodes": nodes, "outputs": [ref.get(o.name, "?") for o in m.graph.output]}


def _per_sample_dims(spec_dims, batch):
    return [batch] + list(spec_dims)


def _size_expr(shape, ref_dims):
    """An `other` storage's shape as references to the op's input/output dims: "x0.1" (dim 1 of input 0),
    "B" (the batch), or a literal. None when a dim cannot be explained."""
    out = []
    for d in shape:
        if d == "N":
            out.append("B")
        elif isinstance(d, str) and d.endswith("*N"):
            k = int(d[:-2])
            hit = None
            for r, dims in ref_dims:
                for a in range(1, len(dims)):
                    prod = 1
                    for b in range(a, len(dims)):
                        prod *= dims[b]
                        if prod == k:
                            hit = [r + ".%d" % i for i in range(a, b + 1)]
                            break
                        if prod > k:
                            break
                    if hit:
                        break
                if hit:
                    break
            if hit is None:
                return None
            out += ["B"] + hit
        elif isinstance(d, int):
            if d == 1:
                out.append(1)
                continue
            hit = None
            pos = len(out)
            for r, dims in ref_dims:  # the same position first, then any
                if pos < len(dims) and pos > 0 and dims[pos] == d:
                    hit = r + ".%d" % pos
                    break
            for r, dims in ref_dims:
                if hit is None:
                    for a in range(1, len(dims)):
                        if dims[a] == d:
                            hit = r + ".%d" % a
                            break
            out.append(hit if hit else d)
        else:
            return None
    return out


def export(call: str, specs, opset: int = OPSET) -> bytes:
    """The wrapped op as ONNX bytes (TRAINING mode, symbolic batch)."""
    import torch
    torch.manual_seed(1234)
    model = wrapped(build_op(call), specs)
    xs = make_inputs(specs, BATCHES[0], 99)
    names = ["x%d" % i for i in range(len(xs))]
    with torch.no_grad():
        n_out = len(_flat_outputs(model(*xs)))
    outs = ["y%d" % i for i in range(n_out)]
    axes = {n: {0: "batch"} for n in names}
    buf = io.BytesIO()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(xs), buf, opset_version=opset, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=names, output_names=outs,
                          dynamic_axes=axes)
    return buf.getvalue()


def _one_line(e: Exception) -> str:
    s = ("%s: %s" % (type(e).__name__, e)).strip().splitlines()
    return s[0][:300] if s else type(e).__name__


def _symbolic_shape(s0, s1, b0, b1):
    """The saved tensor's shape with the batch named: a dim k*b0 at b0 and k*b1 at b1 is "N" or "k*N"."""
    if len(s0) != len(s1):
        return None
    out = []
    for d0, d1 in zip(s0, s1):
        if d0 == d1:
            out.append(d0)
        elif d0 * b1 == d1 * b0 and d0 % b0 == 0:
            k = d0 // b0
            out.append("N" if k == 1 else "%d*N" % k)
        else:
            out.append("?")
    return out


def _output_dims(call: str, specs):
    """Per-sample dims (batch left out) of the op's outputs at batch BATCHES[0]; None for an output whose
    first dim is not the batch (an RNN's h_n)."""
    import torch
    shapes = []
    for b in BATCHES:
        torch.manual_seed(1234)
        model = wrapped(build_op(call), specs)
        xs = make_inputs(specs, b, 99)
        try:
            with torch.no_grad():
                shapes.append([list(o.shape) for o in _flat_outputs(model(*xs))])
        except Exception:
            return []
    return [s0[1:] if len(s0) and len(s1) == len(s0) and s0[0] == BATCHES[0] and s1[0] == BATCHES[1]
            and s0[1:] == s1[1:] else None for s0, s1 in zip(*shapes)]


_DTYPE_BYTES = {"float32": 4, "float64": 8, "int64": 8, "int32": 4, "bool": 1, "uint8": 1, "float16": 2,
                "bfloat16": 2}


def _size_other(e, specs, out_dims):
    """How an intermediate's bytes follow the op's shapes: `size` (dims of the op's inputs/outputs, see
    _size_expr) when its shape explains its bytes exactly, else `ratio` to the bytes of `scale` (x0 or y0)."""
    refs = [("x%d" % i, [None] + parse_input(s)[2]) for i, s in enumerate(specs)]
    refs += [("y%d" % j, [None] + d) for j, d in enumerate(out_dims) if d is not None]
    b0 = BATCHES[0]
    shape = e.get("shape")
    eb = _DTYPE_BYTES.get(e.get("dtype"), 0)
    if shape is not None and eb and e["bytes_per_sample"] > 0:
        expr = _size_expr(shape, refs)
        if expr is not None:
            val = {r: dims for r, dims in refs}
            n = eb
            for f in expr:
                if f == "B":
                    n *= b0
                elif isinstance(f, str):
                    r, a = f.split(".")
                    n *= val[r][int(a)]
                else:
                    n *= f
            if n == e["bytes_per_sample"] * b0 + e["fixed_bytes"]:
                e["size"] = expr
                return
    if e["bytes_per_sample"] > 0:
        # Relative to an output, then an input, of which it is a whole multiple (a GRU cell's gates are
        # 3 x its hidden output), else to the op's first input.
        def per_sample(ref):
            r, dims = ref
            n = 4 if r.startswith("y") or parse_input(specs[int(r[1:])])[0] == "f" else 8
            if r.startswith("x") and parse_input(specs[int(r[1:])])[0] == "b":
                n = 1
            for d in dims[1:]:
                n *= d
            return n
        ordered = [x for x in refs if x[0].startswith("y")] + [x for x in refs if x[0].startswith("x")]
        scale = next((x for x in ordered if per_sample(x) and e["bytes_per_sample"] % per_sample(x) == 0), refs[0])
        e["scale"] = scale[0]
        e["ratio"] = round(e["bytes_per_sample"] / per_sample(scale), 6)


def gen_row(name: str, call: str, specs):
    row = {"name": name, "call": call, "inputs": specs}
    if getattr(build_op(call), "inplace", False) is True:
        # The in-place variant (relu_, leaky_relu_, ...): exported exactly like the out-of-place row
        # with the same pattern, so the planner uses it only where told the module had inplace=True.
        row["inplace"] = True
    export_error = None
    graph = None
    blob = None
    for opset in range(OPSET, MAX_OPSET + 1):
        try:
            blob = export(call, specs, opset)
        except Exception as e:  # the op does not export alone at any opset: listed in the header
            export_error = export_error or _one_line(e)
            continue
        if opset != OPSET:
            row["opset"] = opset
        export_error = None
        break
    if blob is not None:
        row["pattern"] = onnx_pattern(blob)
        graph = onnx_graph(blob)
    else:
        row["pattern"] = None
        export_error += " (and at every opset up to %d)" % MAX_OPSET
    runs = [measure_saved(name, call, specs, b) for b in BATCHES]
    b0, b1 = BATCHES
    out_dims = _output_dims(call, specs)
    entries = []
    if len(runs[0]) == len(runs[1]) and all(a[0] == b[0] for a, b in zip(*runs)):
        for (role, x0, graph_input, dtype, s0, ref), (_, x1, _, _, s1, _) in zip(*runs):
            per = (x1 - x0) // (b1 - b0)
            e = {"role": role, "bytes_per_sample": per, "fixed_bytes": x0 - per * b0, "dtype": dtype,
                 "shape": _symbolic_shape(s0, s1, b0, b1)}
            if graph_input:
                e["graph_input"] = True
            if role in ("input", "output", "input_output") and ref:
                e["of"] = ref
            if role == "other":
                _size_other(e, specs, out_dims)
            entries.append(e)
    else:  # the saved set changes with the batch: per role instead
        roles = []
        for r in runs:
            roles += [e[0] for e in r if e[0] not in roles]
        for role in roles:
            x0 = sum(e[1] for e in runs[0] if e[0] == role)
            x1 = sum(e[1] for e in runs[1] if e[0] == role)
            per = (x1 - x0) // (b1 - b0)
            entries.append({"role": role, "bytes_per_sample": per, "fixed_bytes": x0 - per * b0,
                            "aggregated": True})
            if any(e[2] for e in runs[0] + runs[1] if e[0] == role):
                entries[-1]["graph_input"] = True
    row["saved"] = entries
    if graph is not None:
        row["graph"] = graph
    # What the planner calls activations_saved: neither parameters nor the model's own inputs.
    acts = [e for e in entries if e["role"] != "parameter" and not e.get("graph_input")]
    row["saved_per_sample"] = sum(e["bytes_per_sample"] for e in entries)
    row["saved_fixed"] = sum(e["fixed_bytes"] for e in entries)
    row["activations_per_sample"] = sum(e["bytes_per_sample"] for e in acts)
    row["activations_fixed"] = sum(e["fixed_bytes"] for e in acts)
    return row, export_error


def torch_setup():
    import torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(False)


def generate(names=None):
    import torch
    torch_setup()
    rows, failures = [], []
    for name, call, specs in OPS:
        if names is not None and name not in names:
            continue
        try:
            row, err = gen_row(name, call, specs)
        except Exception as e:
            failures.append({"name": name, "call": call, "stage": "measure", "reason": _one_line(e)})
            continue
        if err:
            failures.append({"name": name, "call": call, "stage": "export", "reason": err})
        rows.append(row)
    return rows, failures


def header(failures):
    import torch
    return {
        "generator": "tools/gen_op_table.py",
        "torch_version": torch.__version__,
        "backend": "cpu",
        "opset": OPSET,
        "opset_fallback": "a row with `opset` exported only at that opset (tried %d..%d in turn)" % (OPSET, MAX_OPSET),
        "export": "torch.onnx.export(training=TrainingMode.TRAINING, do_constant_folding=False), symbolic batch",
        "batches": list(BATCHES),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "roles": {"input": "the op's input (storage)", "output": "the op's output",
                  "input_output": "an output sharing the input's storage (in-place or view)",
                  "parameter": "a parameter or buffer of the module", "other": "an intermediate of the op"},
        "graph_input": "an integer/bool input (indices, labels, masks) the op saves as given: in a one-op model "
                       "it is a graph input, which the planner counts under bytes.inputs",
        "activations": "activations_per_sample/_fixed: saved bytes less parameters and graph inputs",
        "shape": "dtype and shape of the first tensor saved on the storage (a view may be smaller than its "
                 "storage, whose bytes are counted); N is the batch",
        "ops": len(OPS),
        "failures": failures,
    }


def dump_table(head: dict, rows: list) -> str:
    """JSON with one line per row field and per saved entry (readable diffs)."""
    out = ['{\n "header": ' + json.dumps(head, indent=2).replace("\n", "\n ") + ',\n "rows": [']
    for i, r in enumerate(rows):
        fields = []
        for k, v in r.items():
            if k == "saved":
                inner = ",\n".join("    " + json.dumps(e) for e in v)
                fields.append('   "saved": [\n%s\n   ]' % inner if v else '   "saved": []')
            else:
                fields.append("   %s: %s" % (json.dumps(k), json.dumps(v)))
        out.append("  {\n" + ",\n".join(fields) + "\n  }" + ("," if i + 1 < len(rows) else ""))
    out.append(" ]\n}\n")
    return "\n".join(out)


def write_table(path: str):
    t0 = time.time()
    rows, failures = generate()
    with open(path, "w") as f:
        f.write(dump_table(header(failures), rows))
    print("%s: %d rows, %d failures (%d export), %.1f s" % (
        os.path.relpath(path, ROOT), len(rows), len(failures),
        sum(1 for x in failures if x["stage"] == "export"), time.time() - t0))
    return 0


def load_table(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print("gen_op_table: cannot read %s: %s" % (path, e), file=sys.stderr)
        sys.exit(2)


def check(path: str):
    doc = load_table(path)
    committed = {r["name"]: r for r in doc["rows"]}
    rows, failures = generate(set(SAMPLE))
    bad = 0
    for f in failures:
        if f["stage"] == "measure":
            print("DRIFT %s: now fails: %s" % (f["name"], f["reason"]))
            bad += 1
    for r in rows:
        c = committed.get(r["name"])
        if c is None:
            print("DRIFT %s: not in the committed table" % r["name"])
            bad += 1
            continue
        for key in ("call", "pattern", "graph", "saved"):
            if c.get(key) != r.get(key):
                print("DRIFT %s: %s committed %s, now %s" % (r["name"], key, json.dumps(c.get(key)),
                                                              json.dumps(r.get(key))))
                bad += 1
    # The rows' linear model (fixed + batch * per sample) at a batch the generator did not use.
    for r in rows:
        name, call, specs = next(o for o in OPS if o[0] == r["name"])
        got = sum(e[1] for e in measure_saved(name, call, specs, PLAN_BATCH))
        want = r["saved_fixed"] + PLAN_BATCH * r["saved_per_sample"]
        if got != want:
            print("NONLINEAR %s: at batch %d torch saves %d bytes, the row says %d" % (name, PLAN_BATCH, got, want))
            bad += 1
    print("checked %d sample rows against %s: %s" % (len(rows), os.path.relpath(path, ROOT),
                                                     "drift" if bad else "no drift"))
    return 1 if bad else 0


def _load():
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _git_head():
    try:
        p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        return p.stdout.strip() or None
    except OSError:
        return None


def _plan_activations(oomguard: str, onnx_path: str, batch: int):
    """((bytes.activations_saved, uncovered ops), None) or (None, one-line error) from `oomguard plan`."""
    cmd = [oomguard, "plan", onnx_path, "--target", "cpu", "--batch", str(batch), "--loss", "none", "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, "plan timed out at batch %d" % batch
    if p.returncode not in (0, 1):
        return None, "plan exit %d: %s" % (p.returncode, p.stderr.strip()[:300])
    try:
        plan = json.loads(p.stdout)
        return (plan["bytes"]["activations_saved"], [u.get("op") for u in plan.get("uncovered", [])],
                plan.get("warnings", [])), None
    except (ValueError, KeyError, TypeError) as e:
        return None, "plan output: %s" % e


def compare_planner(path: str, oomguard: str, out: str, gate: str | None, quiet: bool):
    doc = load_table(path)
    specs = {n: (c, s) for n, c, s in OPS}
    gate_ops = None
    if gate:
        g = load_table(gate)
        gate_ops = {r["name"] for r in g.get("ops", []) if r.get("agree")}
        gate_ambiguous = {r["name"] for r in g.get("ops", []) if r.get("class") == "ambiguous_export"}
    torch_setup()
    # Rows that export to the same graph as another row with other activations (amax and max(dim)[0]):
    # the planner cannot tell them apart, so it must agree with one of them and warn.
    twins = {}
    for r in doc["rows"]:
        if r.get("graph") is not None:
            twins.setdefault(json.dumps(r["graph"], sort_keys=True), []).append(r)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for row in doc["rows"]:
            name = row["name"]
            if row.get("pattern") is None or name not in specs:
                continue
            call, sp = specs[name]
            onnx_path = os.path.join(tmp, name + ".onnx")
            res = {"name": name, "pattern": row["pattern"]}
            try:
                with open(onnx_path, "wb") as f:
                    f.write(export(call, sp, row.get("opset", OPSET)))
            except Exception as e:
                res.update({"agree": False, "class": "export_error", "error": "export: " + _one_line(e)})
                results.append(res)
                continue
            # Two batches the generator did not measure: the total at each, and the planner's split into
            # bytes per sample and fixed bytes (which part of a rule is wrong).
            got, uncovered, warnings, err = {}, [], [], None
            for b in PLAN_BATCHES:
                r, err = _plan_activations(oomguard, onnx_path, b)
                if err:
                    break
                got[b], uncovered, warnings = r
            b0, b1 = PLAN_BATCHES
            want = {b: row["activations_fixed"] + b * row["activations_per_sample"] for b in PLAN_BATCHES}
            res["table_activations_bytes"] = want[b0]
            res["table_per_sample"] = row["activations_per_sample"]
            res["table_fixed"] = row["activations_fixed"]
            if err:
                res.update({"agree": False, "class": "planner_error", "error": err})
                results.append(res)
                continue
            per = (got[b1] - got[b0]) // (b1 - b0)
            res["planner_activations_bytes"] = got[b0]
            res["planner_per_sample"] = per
            res["planner_fixed"] = got[b0] - b0 * per
            res["uncovered"] = uncovered
            res["ratio"] = round(got[b0] / want[b0], 4) if want[b0] else (1.0 if got[b0] == 0 else None)
            res["agree"] = all(abs(got[b] - want[b]) <= AGREE_TOL * want[b] for b in PLAN_BATCHES)
            res["difference_bytes"] = got[b0] - want[b0]
            same = [t for t in twins.get(json.dumps(row.get("graph"), sort_keys=True), [])
                    if (t["activations_fixed"], t["activations_per_sample"]) !=
                    (row["activations_fixed"], row["activations_per_sample"])]
            if same:
                res["same_export_as"] = [t["name"] for t in same]
                res["planner_warns"] = bool(warnings)
            if res["agree"]:
                res["class"] = "agree"
            elif same and warnings and any(
                    all(abs(got[b] - (t["activations_fixed"] + b * t["activations_per_sample"])) <=
                        AGREE_TOL * (t["activations_fixed"] + b * t["activations_per_sample"]) for b in PLAN_BATCHES)
                    for t in same):
                res["class"] = "ambiguous_export"  # planned as its twin, with a warning
            elif all(abs(got[b] - want[b]) <= SMALL_GAP_BYTES for b in PLAN_BATCHES):
                res["class"] = "small"  # a few bytes that do not grow with the batch (scalars, index lists)
            else:
                res["class"] = "gap"
            results.append(res)
    agree = [r["name"] for r in results if r["agree"]]
    disagree = [r["name"] for r in results if not r["agree"]]
    ambiguous = [r["name"] for r in results if r.get("class") == "ambiguous_export"]
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": "%s, %s, %d cpus" % (platform.node(), platform.processor() or platform.machine(), os.cpu_count()),
        "load": _load(),
        "command": " ".join(["/usr/bin/python3", "tools/gen_op_table.py"] + sys.argv[1:]),
        "torch_version": doc["header"].get("torch_version"),
        "planner_commit": _git_head(),
        "table": os.path.relpath(path, ROOT),
        "batches": list(PLAN_BATCHES),
        "compared": "oomguard plan --target cpu --loss none: bytes.activations_saved vs the table's activations "
                    "(fixed + batch * per sample) at both batches; *_bytes fields are at the first batch, "
                    "planner_per_sample/planner_fixed split the planner's figures the same way",
        "tolerance": AGREE_TOL,
        "agree": len(agree),
        "disagree": len(disagree),
        "ambiguous_export": len(ambiguous),
        "known_gaps": {c: [r["name"] for r in results if r.get("class") == c]
                       for c in ("gap", "small", "planner_error", "export_error", "ambiguous_export")},
        "ops": results,
    }
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    if not quiet:
        for r in results:
            if not r["agree"]:
                print("GAP %-30s table %s planner %s %s" % (r["name"], r.get("table_activations_bytes"),
                                                         r.get("planner_activations_bytes"), r.get("error", "")))
    print("planner agrees on %d of %d single-op models (batches %s); %d more export exactly as another op "
          "that saves otherwise, planned as that op with a warning" % (
              len(agree), len(results), ",".join(map(str, PLAN_BATCHES)), len(ambiguous)))
    if gate_ops is not None:
        lost = sorted(gate_ops - set(agree))
        for n in lost:
            print("REGRESSION %s: agreed in %s, not now" % (n, gate))
        unwarned = sorted(gate_ambiguous - set(agree) - set(ambiguous))
        for n in unwarned:
            print("REGRESSION %s: planned as its twin with a warning in %s, not now" % (n, gate))
        lost += unwarned
        return 1 if lost else 0
    return 0


def self_test():
    """The checker's own verdicts: a drifted table fails --check, a planner that lost an op fails the gate."""
    import contextlib
    ok = True

    def expect(what, got, want):
        nonlocal ok
        if got != want:
            print("SELF-TEST FAIL %s: got %r, want %r" % (what, got, want))
            ok = False

    expect("shape N", _symbolic_shape([2, 8], [4, 8], 2, 4), ["N", 8])
    expect("shape 10*N", _symbolic_shape([20, 16], [40, 16], 2, 4), ["10*N", 16])
    expect("shape fixed", _symbolic_shape([4, 8], [4, 8], 2, 4), [4, 8])
    with tempfile.TemporaryDirectory() as tmp:
        doc = load_table(TABLE)
        rows = [r for r in doc["rows"] if r["name"] in ("relu", "softmax", "linear")]
        expect("roundtrip", json.loads(dump_table(doc["header"], rows))["rows"], rows)
        drift = os.path.join(tmp, "drift.json")
        bad = json.loads(json.dumps(doc))
        for r in bad["rows"]:
            if r["name"] == SAMPLE[0]:
                r["saved"][-1]["bytes_per_sample"] += 4
        with open(drift, "w") as f:
            f.write(dump_table(bad["header"], bad["rows"]))
        with contextlib.redirect_stdout(io.StringIO()):
            rc = check(drift)
        expect("--check on a drifted table", rc, 1)
        # A planner that keeps nothing: every op with saved activations must be reported as lost.
        fake = os.path.join(tmp, "fake_oomguard")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\necho \'{"bytes": {"activations_saved": 0}, "uncovered": []}\'\n')
        os.chmod(fake, 0o755)
        small = os.path.join(tmp, "small.json")
        with open(small, "w") as f:
            f.write(dump_table(doc["header"], rows))
        gate = os.path.join(tmp, "gate.json")
        with open(gate, "w") as f:
            json.dump({"ops": [{"name": r["name"], "agree": True} for r in rows]}, f)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = compare_planner(small, fake, os.path.join(tmp, "r.json"), gate, True)
        expect("gate with a planner that keeps nothing", rc, 1)
        expect("ops reported lost", sorted(l.split()[1].rstrip(":") for l in out.getvalue().splitlines()
                                           if l.startswith("REGRESSION")), ["linear", "relu", "softmax"])
        # max(dim) exports as amax does: planned as amax it must carry a warning, or the gate fails.
        twins = os.path.join(tmp, "twins.json")
        with open(twins, "w") as f:
            f.write(dump_table(doc["header"], [r for r in doc["rows"] if r["name"] in ("max_dim", "amax")]))
        with open(gate, "w") as f:
            json.dump({"ops": [{"name": "max_dim", "agree": False, "class": "ambiguous_export"}]}, f)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = compare_planner(twins, fake, os.path.join(tmp, "r.json"), gate, True)
        expect("gate with a planner that no longer warns of max(dim)", rc, 1)
        expect("twin reported", "REGRESSION max_dim: planned as its twin" in out.getvalue(), True)
    print("self-test: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--table", default=TABLE, help="the table to write or read (default data/op_table.json)")
    ap.add_argument("--check", action="store_true", help="regenerate the SAMPLE rows; exit 1 on drift")
    ap.add_argument("--compare-planner", action="store_true", help="plan every single-op model, report gaps")
    ap.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    ap.add_argument("--out", default=None, help="--compare-planner report path")
    ap.add_argument("--gate", default=None, help="a committed report: exit 1 if an op agreeing there no longer does")
    ap.add_argument("--list", action="store_true", help="print the op names")
    ap.add_argument("--self-test", action="store_true", help="the checker's own verdicts (drift, gate)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    if a.list:
        for n, c, _ in OPS:
            print(n, c)
        return 0
    if a.self_test:
        return self_test()
    if a.check and a.compare_planner:
        print("gen_op_table: --check and --compare-planner are separate runs", file=sys.stderr)
        return 2
    if a.compare_planner:
        if not os.access(a.oomguard, os.X_OK):
            print("gen_op_table: no oomguard binary at %s (--oomguard)" % a.oomguard, file=sys.stderr)
            return 2
        return compare_planner(a.table, a.oomguard, a.out, a.gate, a.quiet)
    if a.check:
        return check(a.table)
    return write_table(a.table)


if __name__ == "__main__":
    sys.exit(main())
