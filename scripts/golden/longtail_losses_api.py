"""Writes test/golden/longtail/losses_api.json: the public long-tail losses of tailor/longtail
(balancedSoftmaxLoss, logitAdjustedLoss, ldamLoss, focalLoss, the loss classes with deferred
re-weighting, classBalancedWeights, logPrior) computed by PyTorch 1.13 in float64 with the
reference code's formulas: kaidic/LDAM-DRW losses.py (LDAMLoss, FocalLoss, focal_loss) and its
class-balanced weights (Cui et al., normalised to sum to the number of classes), balanced softmax
CE(z + log pi) and logit adjustment CE(z + tau log pi) with SADE's log(pi + 1e-9). Each case holds
the loss and its gradient with respect to the logits (for reduction 'none', the gradient of
sum(cotangent * loss)).
scripts/golden/longtail_losses.py covers the same formulas through the config's loss types (1e-6);
this file covers the functions and classes a user calls on plain logits (1e-10).
Run: /usr/bin/python3 scripts/golden/longtail_losses_api.py
The TypeScript test is test/longtail/losses-api.golden.test.ts."""
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
D = torch.float64
EPS = 1e-9


def flat(t):
    return t.detach().reshape(-1).double().tolist()


# ---- kaidic/LDAM-DRW losses.py, with float64 constants on the CPU ----

def focal_loss(input_values, gamma, reduction="mean"):
    """Computes the focal loss"""
    p = torch.exp(-input_values)
    loss = (1 - p) ** gamma * input_values
    return {"mean": loss.mean, "sum": loss.sum, "none": lambda: loss}[reduction]()


class FocalLoss(nn.Module):
    def __init__(self, weight=None, gamma=0., reduction="mean"):
        super(FocalLoss, self).__init__()
        assert gamma >= 0
        self.gamma = gamma
        self.weight = weight
        self.reduction = reduction

    def forward(self, input, target):
        return focal_loss(F.cross_entropy(input, target, reduction='none', weight=self.weight), self.gamma,
                          self.reduction)


class LDAMLoss(nn.Module):
    # scale_logits=True is kaidic's forward (raw cosines, CE(s * output)); False is SADE / BalPoE's,
    # whose logits are already scaled by s (the target logit loses s * m_y).
    def __init__(self, cls_num_list, max_m=0.5, weight=None, s=30, scale_logits=True, reduction="mean"):
        super(LDAMLoss, self).__init__()
        m_list = 1.0 / np.sqrt(np.sqrt(cls_num_list))
        m_list = m_list * (max_m / np.max(m_list))
        m_list = torch.tensor(m_list, dtype=D)
        self.m_list = m_list
        assert s > 0
        self.s = s
        self.weight = weight
        self.scale_logits = scale_logits
        self.reduction = reduction

    def forward(self, x, target):
        index = torch.zeros_like(x, dtype=torch.bool)
        index.scatter_(1, target.data.view(-1, 1), True)
        index_float = index.type(D)
        batch_m = torch.matmul(self.m_list[None, :], index_float.transpose(0, 1))
        batch_m = batch_m.view((-1, 1))
        if not self.scale_logits:
            return F.cross_entropy(torch.where(index, x - batch_m * self.s, x), target, weight=self.weight,
                                   reduction=self.reduction)
        x_m = x - batch_m
        output = torch.where(index, x_m, x)
        return F.cross_entropy(self.s * output, target, weight=self.weight, reduction=self.reduction)


def cb_weights(counts, beta=0.9999):
    # LDAM-DRW's cifar_train.py: per_cls_weights for Reweight / DRW
    effective_num = 1.0 - np.power(beta, counts)
    per_cls_weights = (1.0 - beta) / np.array(effective_num)
    per_cls_weights = per_cls_weights / np.sum(per_cls_weights) * len(counts)
    return per_cls_weights


def log_prior(counts, tau=1.0):
    prior = torch.tensor(np.array(counts, dtype=np.float64) / np.sum(counts), dtype=D)
    return tau * torch.log(prior + EPS)


# ---- inputs ----
inputs = {}


def make_inputs(name, counts, n, seed, scale=3.0, cosine=False):
    g = torch.Generator().manual_seed(seed)
    C = len(counts)
    if cosine:
        logits = torch.rand(n, C, generator=g, dtype=D) * 2 - 1
    else:
        logits = torch.randn(n, C, generator=g, dtype=D) * scale
    target = torch.randint(0, C, (n,), generator=g)
    cotangent = torch.rand(n, generator=g, dtype=D) + 0.5
    inputs[name] = {"counts": counts, "N": n, "C": C, "logits": flat(logits), "target": target.tolist(),
                    "cotangent": flat(cotangent)}


LT10 = [int(np.floor(500 * 0.01 ** (i / 9))) for i in range(10)]  # IR100 profile
make_inputs("lt10", LT10, 16, 11)
make_inputs("lt10_scaled", LT10, 16, 12, scale=12.0)
make_inputs("cos10", LT10, 16, 13, cosine=True)
make_inputs("ties5", [40, 10, 40, 3, 1], 9, 14)


def tensors(name):
    s = inputs[name]
    logits = torch.tensor(s["logits"], dtype=D).view(s["N"], s["C"]).requires_grad_()
    return s, logits, torch.tensor(s["target"]), torch.tensor(s["cotangent"], dtype=D)


def weight_of(counts, options):
    # "weightBeta": the test passes classBalancedWeights(counts, beta) as options.weight
    if "weightBeta" in options:
        return torch.tensor(cb_weights(counts, options["weightBeta"]), dtype=D)
    if "weight" in options:
        return torch.tensor(options["weight"], dtype=D)
    return None


def reference(fn, counts, options, epoch, logits, target):
    reduction = options.get("reduction", "mean")
    if fn in ("balancedSoftmaxLoss", "BalancedSoftmaxLoss"):
        return F.cross_entropy(logits + log_prior(counts), target, reduction=reduction)
    if fn in ("logitAdjustedLoss", "LogitAdjustLoss"):
        return F.cross_entropy(logits + log_prior(counts, options.get("tau", 1.0)), target, reduction=reduction)
    if fn == "ldamLoss":
        return LDAMLoss(counts, options.get("maxMargin", 0.5), weight_of(counts, options), options.get("s", 30),
                        options.get("scaleLogits", False), reduction)(logits, target)
    if fn == "focalLoss":
        return FocalLoss(weight_of(counts, options), options.get("gamma", 0.0), reduction)(logits, target)
    # the classes: class-balanced weights throughout (reweight) or for epochs > reweightEpoch (DRW)
    drw = options.get("reweightEpoch", -1)
    on = options.get("reweight", False) or (drw != -1 and epoch > drw)
    w = torch.tensor(cb_weights(counts, options.get("beta", 0.9999)), dtype=D) if on else None
    if fn == "CrossEntropyLoss":
        return F.cross_entropy(logits, target, weight=w)
    if fn == "FocalLoss":
        return FocalLoss(w, options.get("gamma", 0.0))(logits, target)
    if fn == "LDAMLoss":
        return LDAMLoss(counts, options.get("maxMargin", 0.5), w, options.get("s", 30),
                        options.get("scaleLogits", False))(logits, target)
    raise ValueError(fn)


cases = []


def case(name, fn, input_set, options=None, epoch=None):
    options = options or {}
    s, logits, target, cotangent = tensors(input_set)
    loss = reference(fn, s["counts"], options, epoch, logits, target)
    if loss.dim() == 1:
        (loss * cotangent).sum().backward()
    else:
        loss.backward()
    cases.append({"name": name, "fn": fn, "inputs": input_set, "options": options, "epoch": epoch,
                  "loss": flat(loss) if loss.dim() == 1 else loss.item(), "grad": flat(logits.grad)})


case("balanced_softmax", "balancedSoftmaxLoss", "lt10")
case("balanced_softmax_none", "balancedSoftmaxLoss", "ties5", {"reduction": "none"})
case("logit_adjusted_tau1", "logitAdjustedLoss", "lt10", {"tau": 1.0})
case("logit_adjusted_tau15", "logitAdjustedLoss", "lt10", {"tau": 1.5})
case("logit_adjusted_tau05_sum", "logitAdjustedLoss", "ties5", {"tau": 0.5, "reduction": "sum"})
case("ldam_kaidic", "ldamLoss", "cos10", {"scaleLogits": True})
case("ldam_kaidic_drw_weights", "ldamLoss", "cos10", {"scaleLogits": True, "weightBeta": 0.9999})
case("ldam_scaled_logits", "ldamLoss", "lt10_scaled", {"maxMargin": 0.5, "s": 30})
case("ldam_margin03_s16_weighted", "ldamLoss", "ties5",
     {"maxMargin": 0.3, "s": 16, "weight": [0.5, 2.0, 0.25, 1.5, 3.0]})
case("ldam_kaidic_none", "ldamLoss", "cos10", {"scaleLogits": True, "weightBeta": 0.999, "reduction": "none"})
case("focal_gamma0", "focalLoss", "lt10")
case("focal_gamma2", "focalLoss", "lt10", {"gamma": 2.0})
case("focal_gamma1_weighted", "focalLoss", "lt10", {"gamma": 1.0, "weightBeta": 0.9999})
case("focal_gamma05_weighted_sum", "focalLoss", "ties5",
     {"gamma": 0.5, "weight": [0.5, 2.0, 0.25, 1.5, 3.0], "reduction": "sum"})
case("focal_gamma2_none", "focalLoss", "ties5", {"gamma": 2.0, "reduction": "none"})
case("class_ldam_drw_before", "LDAMLoss", "cos10", {"scaleLogits": True, "reweightEpoch": 2}, epoch=2)
case("class_ldam_drw_after", "LDAMLoss", "cos10", {"scaleLogits": True, "reweightEpoch": 2}, epoch=3)
case("class_ldam_drw_after_scaled", "LDAMLoss", "lt10_scaled", {"reweightEpoch": 0, "beta": 0.999, "s": 20},
     epoch=1)
case("class_ce_drw_before", "CrossEntropyLoss", "lt10", {"reweightEpoch": 4}, epoch=4)
case("class_ce_drw_after", "CrossEntropyLoss", "lt10", {"reweightEpoch": 4}, epoch=5)
case("class_ce_reweight", "CrossEntropyLoss", "ties5", {"reweight": True, "beta": 0.99}, epoch=1)
case("class_focal_drw_after", "FocalLoss", "lt10", {"gamma": 2.0, "reweightEpoch": 1}, epoch=2)
case("class_balanced_softmax", "BalancedSoftmaxLoss", "ties5", {}, epoch=7)
case("class_logit_adjust_tau2", "LogitAdjustLoss", "lt10", {"tau": 2.0}, epoch=1)

priors = []
for counts in (LT10, [40, 10, 40, 3, 1]):
    for beta in (0.9999, 0.99, 0.0):
        priors.append({"fn": "classBalancedWeights", "counts": counts, "arg": beta,
                       "values": cb_weights(counts, beta).tolist()})
    for tau in (1.0, 1.5):
        priors.append({"fn": "logPrior", "counts": counts, "arg": tau, "values": flat(log_prior(counts, tau))})

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "longtail", "losses_api.json")
with open(out, "w") as f:
    json.dump({"generator": "scripts/golden/longtail_losses_api.py", "torch": torch.__version__,
               "inputs": inputs, "cases": cases, "priors": priors}, f)
print(f"wrote {len(cases)} cases and {len(priors)} prior vectors to {os.path.normpath(out)}")
