"""funcgrad_nn.optim: optimizers — a pure optax-style core and PyTorch-style stateful wrappers.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> w = np.zeros(2)
>>> opt = optim.SGD([w], lr=0.1)
>>> opt.step([np.array([1.0, -1.0])])
>>> w
array([-0.1,  0.1])
"""

from funcgrad_nn.optim import (
    assignment,
    contrib,
    losses,
    lr_scheduler,
    microbatching,
    perturbations,
    projections,
    schedules,
    second_order,
    swa_utils,
    transforms,
    tree,
    tree_utils,
)
from funcgrad_nn.optim._accumulation import *  # noqa: F403
from funcgrad_nn.optim._accumulation import __all__ as _acc_all
from funcgrad_nn.optim._distributions import *  # noqa: F403
from funcgrad_nn.optim._distributions import __all__ as _dist_all
from funcgrad_nn.optim._factorized import *  # noqa: F403
from funcgrad_nn.optim._factorized import __all__ as _fact_all
from funcgrad_nn.optim._inject import *  # noqa: F403
from funcgrad_nn.optim._inject import __all__ as _inject_all
from funcgrad_nn.optim._linear_algebra import *  # noqa: F403
from funcgrad_nn.optim._linear_algebra import __all__ as _linalg_all
from funcgrad_nn.optim._linesearch import *  # noqa: F403
from funcgrad_nn.optim._linesearch import __all__ as _ls_all
from funcgrad_nn.optim._losses import *  # noqa: F403
from funcgrad_nn.optim._losses import __all__ as _loss_all
from funcgrad_nn.optim._losses_tasks import *  # noqa: F403
from funcgrad_nn.optim._losses_tasks import __all__ as _loss_tasks_all
from funcgrad_nn.optim._moments import *  # noqa: F403
from funcgrad_nn.optim._moments import __all__ as _moments_all
from funcgrad_nn.optim._monitoring import *  # noqa: F403
from funcgrad_nn.optim._monitoring import __all__ as _monitoring_all
from funcgrad_nn.optim._privacy import *  # noqa: F403
from funcgrad_nn.optim._privacy import __all__ as _privacy_all
from funcgrad_nn.optim._schedules import *  # noqa: F403
from funcgrad_nn.optim._schedules import __all__ as _sched_all
from funcgrad_nn.optim._state_utils import tree_map_params  # optax.tree_map_params
from funcgrad_nn.optim._torch_lbfgs import LBFGS
from funcgrad_nn.optim._torch_transform import *  # noqa: F403
from funcgrad_nn.optim._torch_transform import __all__ as _torch_all
from funcgrad_nn.optim._transform import *  # noqa: F403
from funcgrad_nn.optim._transform import __all__ as _tx_all
from funcgrad_nn.optim._transform_more import *  # noqa: F403
from funcgrad_nn.optim._transform_more import __all__ as _more_all
from funcgrad_nn.optim.microbatching import microbatch
from funcgrad_nn.optim.optimizer import *  # noqa: F403
from funcgrad_nn.optim.optimizer import __all__ as _opt_all

__all__ = [*_tx_all, *_more_all, *_fact_all, *_loss_all, *_loss_tasks_all, *_torch_all, *_sched_all, *_inject_all, *_acc_all, *_ls_all, *_moments_all, *_monitoring_all, *_linalg_all, *_dist_all, *_privacy_all, *_opt_all, "LBFGS", "tree_map_params", "microbatch", "assignment", "contrib", "losses", "lr_scheduler", "microbatching", "perturbations", "projections", "schedules", "second_order", "swa_utils", "transforms", "tree", "tree_utils"]
