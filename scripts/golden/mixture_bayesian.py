#!/usr/bin/env python3
"""Golden data for tailor's BayesianGaussianMixture, from scikit-learn's BayesianGaussianMixture.

Run with Debian's python3-sklearn:  /usr/bin/python3 scripts/golden/mixture_bayesian.py
Writes test/golden/mixture/bayesian.json.

The fixed-init protocol of the Gaussian mixture's reference cases (data/mixture/gmm): every start
begins from the one-hot responsibilities of init_labels.csv, so that the fit is deterministic and
independent of either library's random numbers. For each data set, covariance type and weight
prior, with K one above the labels' (a surplus component for the prior to empty), it records the
lower bound after every iteration, the final posterior hyperparameters, the weights, the score and
the labels.
"""
import json
import os

import numpy as np
import sklearn
from sklearn.mixture import BayesianGaussianMixture

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))
DATA = os.path.join(ROOT, 'data', 'mixture', 'gmm')
OUT = os.path.join(ROOT, 'test', 'golden', 'mixture')


def fit(x, labels, k, options):
    resp = np.zeros((x.shape[0], k))
    resp[np.arange(x.shape[0]), labels] = 1.0
    trace = []

    class Fixed(BayesianGaussianMixture):
        def _initialize_parameters(self, X, random_state):
            self._initialize(X, resp)

        def _compute_lower_bound(self, log_resp, log_prob_norm):
            value = super()._compute_lower_bound(log_resp, log_prob_norm)
            trace.append(float(value))
            return value

    model = Fixed(n_components=k, max_iter=500, tol=1e-8, random_state=0, **options)
    model.fit(x)
    wc = model.weight_concentration_
    wc = np.concatenate(wc) if isinstance(wc, tuple) else wc
    return {
        'options': options,
        'k': k,
        'trace': trace,
        'n_iter': int(model.n_iter_),
        'converged': bool(model.converged_),
        'lower_bound': float(model.lower_bound_),
        'weight_concentration': np.ravel(wc).tolist(),
        'mean_precision': np.ravel(model.mean_precision_).tolist(),
        'means': np.ravel(model.means_).tolist(),
        'degrees_of_freedom': np.ravel(model.degrees_of_freedom_).tolist(),
        'covariances': np.ravel(model.covariances_).tolist(),
        'precisions_cholesky': np.ravel(model.precisions_cholesky_).tolist(),
        'weights': np.ravel(model.weights_).tolist(),
        'score': float(model.score(x)),
        'labels': model.predict(x).tolist(),
        'proba_first_rows': np.ravel(model.predict_proba(x[:5])).tolist(),
    }


def main():
    cases = []
    for name in ['iris', 'synthetic3']:
        x = np.loadtxt(os.path.join(DATA, name, 'data.csv'), delimiter=',', skiprows=1)
        labels = np.loadtxt(os.path.join(DATA, name, 'init_labels.csv'), skiprows=1).astype(int)
        k = int(labels.max()) + 2
        for covariance_type in ['full', 'tied', 'diag', 'spherical']:
            for prior in ['dirichlet_process', 'dirichlet_distribution']:
                options = {'covariance_type': covariance_type, 'weight_concentration_prior_type': prior}
                cases.append({'data': name, **fit(x, labels, k, options)})
        d = x.shape[1]
        # every prior given
        rng = np.random.default_rng(5)
        a = rng.normal(size=(d, d))
        for covariance_type, cov_prior in [
            ('full', (a @ a.T + d * np.eye(d)).tolist()),
            ('diag', (np.arange(d) + 0.5).tolist()),
            ('spherical', 0.7),
        ]:
            options = {
                'covariance_type': covariance_type,
                'weight_concentration_prior_type': 'dirichlet_process',
                'weight_concentration_prior': 0.01,
                'mean_precision_prior': 0.5,
                'mean_prior': (np.arange(d) * 0.3).tolist(),
                'degrees_of_freedom_prior': d + 1.5,
                'covariance_prior': cov_prior,
            }
            cases.append({'data': name, **fit(x, labels, k, options)})
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, 'bayesian.json'), 'w') as f:
        json.dump({'sklearn': sklearn.__version__, 'cases': cases}, f)
    print('wrote', len(cases), 'cases to', OUT)


if __name__ == '__main__':
    main()
