"""funcgrad.scipy.stats: differentiable ``scipy.stats`` distributions, as modules of functions
(like ``jax.scipy.stats``): ``norm.logpdf(x, loc=0, scale=1)`` and so on.

Distributions: ``norm``, ``multivariate_normal``, ``t``, ``laplace``, ``logistic``,
``cauchy``, ``expon``, ``gamma``, ``chi2``, ``beta``, ``f``, ``uniform``, ``dirichlet``,
``pareto``, ``gumbel_r``, ``gumbel_l``, ``gennorm``, ``truncnorm``, ``vonmises``,
``wrapcauchy``, ``lognorm``, ``halfnorm``, ``weibull_min``, ``rayleigh``, ``kstwobign``,
``kstwo``, ``ksone`` (SciPy's, beyond JAX) and the discrete ``poisson``, ``bernoulli``, ``binom``, ``geom``, ``nbinom``,
``betabinom``, ``multinomial``. Also the descriptive ``mode``, ``rankdata``, ``sem``,
``entropy``, ``zscore``, ``skew``, ``kurtosis`` and ``pearsonr`` (functions) and ``gaussian_kde`` (a class);
the tests ``ttest_1samp``, ``ttest_ind``, ``ttest_rel``, ``spearmanr``, ``linregress``,
``ks_1samp``, ``ks_2samp`` and ``kstest``. Arguments broadcast; float32 stays float32,
integers give float64 (SciPy always returns float64); ``scale <= 0`` gives nan.

Example:
    >>> import funcgrad
    >>> from funcgrad.scipy.stats import norm
    >>> float(funcgrad.grad(norm.logpdf)(1.0))   # d/dx of -x^2/2
    -1.0
"""

from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy.stats import (  # noqa: F401
    _generic,
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    f,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    halfnorm,
    ksone,
    kstwo,
    kstwobign,
    laplace,
    logistic,
    lognorm,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    rayleigh,
    t,
    truncnorm,
    uniform,
    vonmises,
    weibull_min,
    wrapcauchy,
)
from funcgrad.scipy.stats._binned import (
    BinnedStatistic2dResult,
    BinnedStatisticddResult,
    BinnedStatisticResult,
    binned_statistic,
    binned_statistic_2d,
    binned_statistic_dd,
)
from funcgrad.scipy.stats._circular import boxcox, boxcox_llf, circmean, circstd, circvar
from funcgrad.scipy.stats._contingency import (
    Chi2ContingencyResult,
    chi2_contingency,
    expected_freq,
    fisher_exact,
)
from funcgrad.scipy.stats._descriptive import (
    ModeResult,
    PearsonRResult,
    entropy,
    kurtosis,
    mode,
    pearsonr,
    rankdata,
    sem,
    skew,
    zmap,
    zscore,
)
from funcgrad.scipy.stats._generic import rv_frozen
from funcgrad.scipy.stats._kde import gaussian_kde
from funcgrad.scipy.stats._ks import KstestResult, ks_1samp, ks_2samp, kstest
from funcgrad.scipy.stats._normality_tests import (
    AndersonResult,
    BartlettResult,
    FlignerResult,
    KurtosistestResult,
    LeveneResult,
    NormaltestResult,
    ShapiroResult,
    SkewtestResult,
    anderson,
    bartlett,
    fligner,
    kurtosistest,
    levene,
    normaltest,
    shapiro,
    skewtest,
)
from funcgrad.scipy.stats._pvalues_distances import (
    combine_pvalues,
    energy_distance,
    false_discovery_control,
    gstd,
    wasserstein_distance,
)
from funcgrad.scipy.stats._rank_tests import (
    BinomTestResult,
    FriedmanchisquareResult,
    KruskalResult,
    MannwhitneyuResult,
    RanksumsResult,
    WilcoxonResult,
    binomtest,
    friedmanchisquare,
    kruskal,
    mannwhitneyu,
    ranksums,
    wilcoxon,
)
from funcgrad.scipy.stats._summary import (
    DescribeResult,
    describe,
    gmean,
    hmean,
    iqr,
    median_abs_deviation,
    moment,
    pmean,
    trim_mean,
    variation,
)
from funcgrad.scipy.stats._tests import (
    ConfidenceInterval,
    F_onewayResult,
    LinregressResult,
    Power_divergenceResult,
    SignificanceResult,
    TtestResult,
    chisquare,
    f_oneway,
    kendalltau,
    linregress,
    pointbiserialr,
    spearmanr,
    ttest_1samp,
    ttest_ind,
    ttest_rel,
)
from funcgrad.scipy.stats._trimmed import (
    SigmaclipResult,
    percentileofscore,
    scoreatpercentile,
    sigmaclip,
    tmax,
    tmean,
    tmin,
    trim1,
    trimboth,
    tsem,
    tstd,
    tvar,
)

# SciPy's mean/var/std/stats/entropy/median/interval/support where a module lacks them, and
# freezing (norm(loc, scale)): one generic layer over every distribution module.
for _module in (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, f, gamma,
                gennorm, geom, gumbel_l, gumbel_r, halfnorm, ksone, kstwo, kstwobign, laplace,
                logistic, lognorm, multinomial, multivariate_normal, nbinom, norm, pareto,
                poisson, rayleigh, t, truncnorm, uniform, vonmises, weibull_min, wrapcauchy):
    _generic.install(_module)
del _module

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "f",
    "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial",
    "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "truncnorm", "uniform",
    "vonmises", "wrapcauchy", "lognorm", "halfnorm", "weibull_min", "rayleigh", "ModeResult", "mode", "rankdata", "sem", "entropy", "zscore",
    "skew", "kurtosis", "PearsonRResult", "pearsonr",
    "gaussian_kde", "TtestResult", "ConfidenceInterval", "ttest_1samp", "ttest_ind",
    "ttest_rel", "SignificanceResult", "spearmanr", "kendalltau", "LinregressResult", "linregress",
    "gmean", "hmean", "pmean", "moment", "variation", "iqr", "median_abs_deviation",
    "DescribeResult", "describe", "kstwobign", "kstwo", "ksone", "KstestResult", "ks_1samp",
    "ks_2samp", "kstest", "rv_frozen", "zmap", "trim_mean", "chisquare", "f_oneway",
    "Power_divergenceResult", "F_onewayResult", "SkewtestResult", "KurtosistestResult",
    "NormaltestResult", "skewtest", "kurtosistest", "normaltest", "BartlettResult",
    "LeveneResult", "FlignerResult", "bartlett", "levene", "fligner", "MannwhitneyuResult",
    "mannwhitneyu", "WilcoxonResult", "wilcoxon", "RanksumsResult", "ranksums",
    "KruskalResult", "kruskal", "FriedmanchisquareResult", "friedmanchisquare",
    "BinomTestResult", "binomtest", "Chi2ContingencyResult", "chi2_contingency",
    "expected_freq", "fisher_exact", "tmean", "tvar", "tstd", "tsem", "tmin", "tmax",
    "trimboth", "trim1", "SigmaclipResult", "sigmaclip", "percentileofscore",
    "scoreatpercentile", "circmean", "circvar", "circstd", "boxcox", "boxcox_llf",
    "pointbiserialr", "wasserstein_distance", "energy_distance", "combine_pvalues",
    "false_discovery_control", "gstd", "AndersonResult", "anderson", "ShapiroResult", "shapiro", "BinnedStatisticResult",
    "binned_statistic", "BinnedStatistic2dResult", "binned_statistic_2d",
    "BinnedStatisticddResult", "binned_statistic_dd",
]

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
