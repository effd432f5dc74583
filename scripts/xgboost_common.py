"""What the XGBoost comparison scripts (xgboost_tabular.py, xgboost_uci.py,
xgboost_tune.py) share: their search's command-line flags."""


def search_args(ap, trials=True):
    """Adds the flags of a seeded XGBoost search to the argparse parser ap:
    --trials (configurations drawn, 30; left out when trials is False),
    --seed (1) and --threads (XGBoost's threads, 2)."""
    if trials:
        ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
