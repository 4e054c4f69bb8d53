"""Fair multi-agent bandit learners: environment, learners, regret accounting, simulation.

>>> from fairarena.learners import FairLearner, MultiAgentBandit
>>> env = MultiAgentBandit([[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]], "beta:0.05")
>>> res = FairLearner("pf").simulate(env, T=2000, seeds=4)
>>> res.final_policy().round(1).tolist()
[0.7, 0.3]
"""

from fairarena.learners.env import MultiAgentBandit, RewardFamily, beta_params, parse_family
from fairarena.learners.learners import LEARNERS, FairLearner, LearnerSpec, make_learner, register_learner
from fairarena.learners.simulate import SimulationResult, simulate, simulate_many

__all__ = [
    "MultiAgentBandit", "RewardFamily", "beta_params", "parse_family", "LEARNERS", "FairLearner", "LearnerSpec",
    "make_learner", "register_learner", "SimulationResult", "simulate", "simulate_many",
]
