"""Writes test/golden/longtail/losses.json: the long-tail losses computed by PyTorch 1.13 in
float64 with the formulas of the reference code (SADE-AgnosticLT and BalPoE-CalibratedLT
model/loss.py, kaidic/LDAM-DRW losses.py, frank-xwang/RIDE-LongTailRecognition's RIDELoss,
DataLab-atom/PRL's scalarizations as the paper defines them), with the gradients of the loss with respect to the combined output and the per-expert logits.
Run: /usr/bin/python3 scripts/golden/longtail_losses.py
The TypeScript test (test/longtail/losses.golden.test.ts) builds each loss with createLoss() from
the same type and args and compares (max abs error 1e-6)."""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
D = torch.float64
EPS = 1e-9


def flat(t):
    return t.detach().reshape(-1).double().tolist()


# ---- reference formulas (float64 instead of the reference's float32 constants) ----

def prior_of(counts):
    p = np.array(counts, dtype=np.float64) / np.sum(counts)
    return torch.tensor(p, dtype=D)


def inverse_prior(prior):
    # SADE's inverse_prior, with stable sorts so tied classes keep index order.
    value, idx0 = torch.sort(prior, stable=True)
    _, idx1 = torch.sort(idx0, stable=True)
    idx2 = prior.shape[0] - 1 - idx1
    return value.index_select(0, idx2)


def cb_weights(counts, beta=0.9999):
    effective_num = 1.0 - np.power(beta, counts)
    w = (1.0 - beta) / np.array(effective_num)
    w = w / np.sum(w) * len(counts)
    return torch.tensor(w, dtype=D)


def drw_active(args, epoch):
    # LDAM-DRW's deferred re-weighting, switched by _hook_before_epoch(epoch): on for epoch > reweight_epoch
    reweight_epoch = args.get("reweight_epoch", -1)
    return reweight_epoch != -1 and epoch is not None and epoch > reweight_epoch


def ce_loss(counts, args, output, logits, target, epoch):
    on = args.get("reweight_CE") or drw_active(args, epoch)
    w = cb_weights(counts, args.get("beta", 0.9999)) if on else None
    return F.cross_entropy(output, target, weight=w)


def balanced_softmax(counts, args, output, logits, target, epoch):
    return F.cross_entropy(output + torch.log(prior_of(counts) + args.get("eps", EPS)), target)


def logit_adjust(counts, args, output, logits, target, epoch):
    tau = args.get("tau", 1.0)
    return F.cross_entropy(output + tau * torch.log(prior_of(counts) + args.get("eps", EPS)), target)


def focal(counts, args, output, logits, target, epoch):
    on = args.get("reweight") or drw_active(args, epoch)
    w = cb_weights(counts, args.get("beta", 0.9999)) if on else None
    ce = F.cross_entropy(output, target, reduction="none", weight=w)
    p = torch.exp(-ce)
    return ((1 - p) ** args.get("gamma", 0.0) * ce).mean()


def ldam(counts, args, output, logits, target, epoch):
    max_m, s = args.get("max_m", 0.5), args.get("s", 30)
    m_list = 1.0 / np.sqrt(np.sqrt(counts))
    m_list = torch.tensor(m_list * (max_m / np.max(m_list)), dtype=D)
    weight = cb_weights(counts, args.get("beta", 0.9999)) if drw_active(args, epoch) else None
    x = output
    index = torch.zeros_like(x, dtype=torch.bool)
    index.scatter_(1, target.view(-1, 1), True)
    batch_m = torch.matmul(m_list[None, :], index.to(D).transpose(0, 1)).view((-1, 1))
    if args.get("scale_logits"):  # kaidic/LDAM-DRW: raw cosines, CE(s * output)
        return F.cross_entropy(s * torch.where(index, x - batch_m, x), target, weight=weight)
    return F.cross_entropy(torch.where(index, x - batch_m * s, x), target, weight=weight)  # SADE / BalPoE


def diverse(counts, args, output, logits, target, epoch):
    if logits is None:
        return F.cross_entropy(output, target)
    return diverse_terms(counts, args, logits, target).sum()


def diverse_terms(counts, args, logits, target):
    tau = args.get("tau", 2)
    prior = prior_of(counts)
    l1 = F.cross_entropy(logits[0], target)
    l2 = F.cross_entropy(logits[1] + torch.log(prior + EPS), target)
    inv = inverse_prior(prior)
    l3 = F.cross_entropy(logits[2] + torch.log(prior + EPS) - tau * torch.log(inv + EPS), target)
    return torch.stack([l1, l2, l3])


def bs_experts(counts, args, output, logits, target, epoch):
    tau_list = args.get("tau_list", [0, 1, 2])
    prior = prior_of(counts)
    log_prior = torch.log(prior / prior.sum() + args.get("eps", EPS))
    loss = 0.0
    for i, tau in enumerate(tau_list):
        loss = loss + F.cross_entropy(logits[i] + tau * log_prior, target)
    return loss / len(tau_list)


def prl_terms(counts, args, logits, target):
    terms = args.get("expert_losses", [{"type": "forward"}, {"type": "uniform"}, {"type": "backward", "tau": 2}])
    prior = prior_of(counts)
    out = []
    for e, t in enumerate(terms):
        if t["type"] == "forward":
            z = logits[e]
        elif t["type"] == "uniform":
            z = logits[e] + t.get("tau", 1.0) * torch.log(prior + EPS)
        else:
            z = logits[e] + torch.log(prior + EPS) - t.get("tau", 2.0) * torch.log(inverse_prior(prior) + EPS)
        out.append(F.cross_entropy(z, target))
    return torch.stack(out)


def scalarize(args, losses, pref):
    if args.get("variant") == "released":
        return losses.sum()
    r = torch.tensor(pref, dtype=D)
    name = args.get("scalarization", "stch")
    if name == "linear":
        return (r * losses).sum()
    mu = args.get("mu", 0.1)
    z = torch.tensor(args.get("z", 0.0), dtype=D)
    return mu * torch.logsumexp(r * (losses - z) / mu, 0)


def prl(counts, args, output, logits, target, epoch, pref):
    return scalarize(args, prl_terms(counts, args, logits, target), pref)


def prl_mixup(counts, args, logits, ya, yb, lam, pref):
    mixed = lam * prl_terms(counts, args, logits, ya) + (1 - lam) * prl_terms(counts, args, logits, yb)
    return scalarize(args, mixed, pref)


def ride(counts, args, output, logits, target, epoch):
    # frank-xwang/RIDE-LongTailRecognition RIDELoss. Its _hook_before_epoch never sets the weights
    # when reweight is false or reweight_epoch is -1 (forward then raises AttributeError); here,
    # as in tailor, that means never re-weighting.
    if logits is None:
        return F.cross_entropy(output, target)
    max_m, s = args.get("max_m", 0.5), args.get("s", 30)
    factor = args.get("additional_diversity_factor", -0.2)
    base_factor = args.get("base_loss_factor", 1.0)
    base_t = args.get("base_diversity_temperature", 1.0)
    reweight_factor = args.get("reweight_factor", 0.05)
    drw_args = args if args.get("reweight", True) else {}
    on = drw_active(drw_args, epoch)
    m_list = 1.0 / np.sqrt(np.sqrt(counts))
    m_list = torch.tensor(m_list * (max_m / np.max(m_list)), dtype=D)
    prior = np.array(counts) / np.sum(counts)
    div_w = len(counts) * prior * reweight_factor + 1 - reweight_factor
    div_w = torch.tensor(div_w / np.max(div_w), dtype=D)
    weight = cb_weights(counts) if on else None
    loss = 0
    for item in logits:
        x = output if factor == 0 else item
        index = torch.zeros_like(x, dtype=torch.bool)
        index.scatter_(1, target.view(-1, 1), True)
        batch_m = torch.matmul(m_list[None, :], index.to(D).transpose(0, 1)).view((-1, 1))
        loss = loss + base_factor * F.cross_entropy(torch.where(index, x - batch_m * s, x), target, weight=weight)
        if on:
            temperature = base_t * div_w.view((1, -1))
            t_mean = temperature.mean().item()
        else:
            temperature = base_t
            t_mean = base_t
        log_q = F.log_softmax(item / temperature, dim=1)
        with torch.no_grad():
            p = F.softmax(output / temperature, dim=1)
        loss = loss + factor * t_mean * t_mean * F.kl_div(log_q, p, reduction="batchmean")
    return loss


def ride_distill(counts, args, output, logits, target, epoch, teacher):
    # RIDELossWithDistill: per student expert, the whole RIDE loss plus the distillation term
    if logits is None:
        return ride(counts, args, output, logits, target, epoch)
    T = args.get("distill_temperature", 1.0)
    ride_args = {k: v for k, v in args.items()
                 if k not in ("distill_temperature", "additional_distill_loss_factor", "ride_loss_factor")}
    loss = 0
    for _ in logits:
        loss = loss + args.get("ride_loss_factor", 1.0) * ride(counts, ride_args, output, logits, target, epoch)
        student = F.log_softmax(output / T, dim=1)
        with torch.no_grad():
            t = F.softmax(teacher / T, dim=1)
        loss = loss + args.get("additional_distill_loss_factor", 1.0) * T * T * F.kl_div(student, t, reduction="batchmean")
    return loss


REFS = {
    "CrossEntropyLoss": ce_loss,
    "BalancedSoftmaxLoss": balanced_softmax,
    "LogitAdjustLoss": logit_adjust,
    "FocalLoss": focal,
    "LDAMLoss": ldam,
    "DiverseExpertLoss": diverse,
    "BSExpertLoss": bs_experts,
    "RIDELoss": ride,
}

# ---- input sets ----
inputs = {}


def make_inputs(name, counts, experts, n, seed, scale=3.0, cosine=False):
    g = torch.Generator().manual_seed(seed)
    C = len(counts)
    if cosine:
        output = torch.rand(n, C, generator=g, dtype=D) * 2 - 1
        logits = torch.rand(experts, n, C, generator=g, dtype=D) * 2 - 1
    else:
        output = torch.randn(n, C, generator=g, dtype=D) * scale
        logits = torch.randn(experts, n, C, generator=g, dtype=D) * scale
    target = torch.randint(0, C, (n,), generator=g)
    target_b = torch.randint(0, C, (n,), generator=g)
    soft = torch.rand(n, C, generator=g, dtype=D)
    soft = soft / soft.sum(1, keepdim=True)
    inputs[name] = {
        "counts": counts, "experts": experts, "N": n, "C": C,
        "output": flat(output), "logits": flat(logits),
        "target": target.tolist(), "target_b": target_b.tolist(), "soft_target": flat(soft),
    }


LT10 = [int(np.floor(500 * 0.01 ** (i / 9))) for i in range(10)]  # IR100 profile
make_inputs("lt10", LT10, 3, 12, 1)
make_inputs("ties6", [40, 10, 40, 10, 2, 10], 3, 10, 2)
make_inputs("lt10_e2", LT10, 2, 9, 3)
make_inputs("cos10", LT10, 1, 12, 4, cosine=True)
make_inputs("lt10_scaled", LT10, 3, 12, 5, scale=12.0)


def tensors(name):
    s = inputs[name]
    N, C, E = s["N"], s["C"], s["experts"]
    output = torch.tensor(s["output"], dtype=D).view(N, C).requires_grad_()
    logits = torch.tensor(s["logits"], dtype=D).view(E, N, C).requires_grad_()
    return s, output, logits


cases = []


def case(name, loss_type, args, input_set, epoch=None, soft=False, preference=None, mixup=None, no_logits=False,
         teacher=False):
    s, output, logits = tensors(input_set)
    teacher_t = None
    if teacher:
        g = torch.Generator().manual_seed(99)
        teacher_t = torch.randn(s["N"], s["C"], generator=g, dtype=D) * 12.0
    counts = s["counts"]
    target = torch.tensor(s["target"])
    if soft:
        target = torch.tensor(s["soft_target"], dtype=D).view(s["N"], s["C"])
    lg = None if no_logits else logits
    if mixup is not None:
        yb = torch.tensor(s["target_b"])
        if loss_type == "PRLLoss":
            loss = prl_mixup(counts, args, logits, target, yb, mixup, preference)
        else:
            ref = REFS[loss_type]
            loss = mixup * ref(counts, args, output, lg, target, epoch) + (1 - mixup) * ref(counts, args, output, lg, yb, epoch)
    elif loss_type == "PRLLoss":
        loss = prl(counts, args, output, logits, target, epoch, preference)
    elif loss_type == "RIDELossWithDistill":
        loss = ride_distill(counts, args, output, lg, target, epoch, teacher_t)
    else:
        loss = REFS[loss_type](counts, args, output, lg, target, epoch)
    loss.backward()
    cases.append({
        "name": name, "type": loss_type, "args": args, "inputs": input_set, "epoch": epoch, "soft": soft,
        "preference": preference, "mixup": mixup, "no_logits": no_logits,
        **({"teacher": flat(teacher_t)} if teacher else {}),
        "loss": loss.item(),
        "output_grad": flat(output.grad) if output.grad is not None else None,
        "logits_grad": flat(logits.grad) if logits.grad is not None else None,
    })


case("ce", "CrossEntropyLoss", {}, "lt10")
case("ce_reweight", "CrossEntropyLoss", {"reweight_CE": True}, "lt10")
case("ce_soft", "CrossEntropyLoss", {}, "lt10", soft=True)
case("ce_reweight_soft", "CrossEntropyLoss", {"reweight_CE": True}, "lt10", soft=True)
case("ce_reweight_beta", "CrossEntropyLoss", {"reweight_CE": True, "beta": 0.99}, "ties6")
case("ce_drw_at", "CrossEntropyLoss", {"reweight_epoch": 2}, "lt10", epoch=2)
case("ce_drw_after", "CrossEntropyLoss", {"reweight_epoch": 2, "beta": 0.999}, "lt10", epoch=3)
case("balanced_softmax", "BalancedSoftmaxLoss", {}, "lt10")
case("balanced_softmax_soft", "BalancedSoftmaxLoss", {}, "lt10", soft=True)
case("logit_adjust_tau2", "LogitAdjustLoss", {"tau": 2.0}, "lt10")
case("focal_gamma0", "FocalLoss", {"gamma": 0.0}, "lt10")
case("focal_gamma1", "FocalLoss", {"gamma": 1.0}, "lt10")
case("focal_gamma2_reweight", "FocalLoss", {"gamma": 2.0, "reweight": True}, "lt10")
case("focal_gamma1_drw_before", "FocalLoss", {"gamma": 1.0, "reweight_epoch": 5}, "lt10", epoch=5)
case("focal_gamma1_drw_after", "FocalLoss", {"gamma": 1.0, "reweight_epoch": 5}, "lt10", epoch=6)
case("focal_gamma1_soft", "FocalLoss", {"gamma": 1.0}, "lt10", soft=True)
case("ldam", "LDAMLoss", {"max_m": 0.5, "s": 30}, "lt10_scaled")
case("ldam_drw_before", "LDAMLoss", {"max_m": 0.5, "s": 30, "reweight_epoch": 3}, "lt10_scaled", epoch=1)
case("ldam_drw_at", "LDAMLoss", {"max_m": 0.5, "s": 30, "reweight_epoch": 3}, "lt10_scaled", epoch=3)
case("ldam_drw_after", "LDAMLoss", {"max_m": 0.5, "s": 30, "reweight_epoch": 3}, "lt10_scaled", epoch=4)
case("ldam_kaidic_scale", "LDAMLoss", {"max_m": 0.5, "s": 30, "scale_logits": True}, "cos10")
case("ldam_ties_margin03", "LDAMLoss", {"max_m": 0.3, "s": 16, "reweight_epoch": 0}, "ties6", epoch=1)
case("diverse_tau2", "DiverseExpertLoss", {"tau": 2}, "lt10")
case("diverse_tau1_ties", "DiverseExpertLoss", {"tau": 1}, "ties6")
case("diverse_no_logits", "DiverseExpertLoss", {"tau": 2}, "lt10", no_logits=True)
case("bs_experts_cifar", "BSExpertLoss", {"tau_list": [0, 1, 2]}, "lt10")
case("bs_experts_inat", "BSExpertLoss", {"tau_list": [-1, 1, 3]}, "ties6")
case("bs_experts_two", "BSExpertLoss", {"tau_list": [0, 1.25]}, "lt10_e2")
case("prl_stch", "PRLLoss", {}, "lt10", preference=[0.2, 0.3, 0.5])
case("prl_stch_mu03_z", "PRLLoss", {"mu": 0.3, "z": [0.5, 1.0, 1.5]}, "lt10", preference=[0.6, 0.1, 0.3])
case("prl_stch_corner", "PRLLoss", {"mu": 0.1}, "ties6", preference=[0.0, 0.0, 1.0])
case("prl_linear", "PRLLoss", {"scalarization": "linear"}, "lt10", preference=[0.2, 0.3, 0.5])
case("prl_released", "PRLLoss", {"variant": "released"}, "lt10", preference=[0.2, 0.3, 0.5])
case("prl_terms_custom", "PRLLoss",
     {"expert_losses": [{"type": "uniform", "tau": 1.25}, {"type": "backward", "tau": 1}]}, "lt10_e2",
     preference=[0.7, 0.3])
case("ride_before_drw", "RIDELoss", {"reweight_epoch": 3}, "lt10_scaled", epoch=3)
case("ride_after_drw", "RIDELoss", {"additional_diversity_factor": -0.45, "reweight_epoch": 3}, "lt10_scaled", epoch=4)
case("ride_temperature_ties", "RIDELoss",
     {"max_m": 0.3, "s": 16, "reweight_epoch": 0, "base_diversity_temperature": 2.0, "reweight_factor": 0.2,
      "base_loss_factor": 0.5, "additional_diversity_factor": 0.3}, "ties6", epoch=1)
case("ride_no_diversity", "RIDELoss", {"additional_diversity_factor": 0.0, "reweight_epoch": 1}, "lt10_scaled", epoch=2)
case("ride_reweight_off", "RIDELoss", {"reweight": False, "reweight_epoch": 1}, "lt10_scaled", epoch=5)
case("ride_never_reweight", "RIDELoss", {}, "lt10_e2", epoch=9)
case("ride_no_logits", "RIDELoss", {"reweight_epoch": 3}, "lt10_scaled", epoch=4, no_logits=True)
case("ride_distill", "RIDELossWithDistill",
     {"additional_diversity_factor": -0.45, "distill_temperature": 1.5, "reweight_epoch": 3}, "lt10_scaled",
     epoch=4, teacher=True)
case("ride_distill_factors", "RIDELossWithDistill",
     {"additional_distill_loss_factor": 0.5, "ride_loss_factor": 2.0, "reweight": False}, "lt10_e2",
     epoch=1, teacher=True)
case("ride_distill_no_logits", "RIDELossWithDistill", {"reweight_epoch": 3}, "lt10_scaled", epoch=1,
     no_logits=True, teacher=True)
case("mixup_ce", "CrossEntropyLoss", {}, "lt10", mixup=0.3)
case("mixup_diverse", "DiverseExpertLoss", {"tau": 2}, "lt10", mixup=0.3)
case("mixup_bs_experts", "BSExpertLoss", {"tau_list": [0, 1, 2]}, "lt10", mixup=0.8)
case("mixup_ldam_drw", "LDAMLoss", {"reweight_epoch": 2}, "lt10_scaled", epoch=5, mixup=0.45)
case("mixup_ride_drw", "RIDELoss", {"reweight_epoch": 2}, "lt10_scaled", epoch=5, mixup=0.45)
case("mixup_prl_stch", "PRLLoss", {}, "lt10", preference=[0.2, 0.3, 0.5], mixup=0.3)

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "longtail", "losses.json")
with open(out, "w") as f:
    json.dump({"generator": "scripts/golden/longtail_losses.py", "torch": torch.__version__,
               "inputs": inputs, "cases": cases}, f)
print(f"wrote {len(cases)} cases to {os.path.normpath(out)}")
