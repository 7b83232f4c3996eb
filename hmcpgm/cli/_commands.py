"""The commands of the ``hmcpgm`` command line: each reads its files, calls the public API, writes."""

import contextlib
import os
import sys
from pathlib import Path

from ._errors import UserError

#: Per command: its input files and its output files (argument name -> what messages call it). The command line
#: refuses an output that is an input or another output, and reads an input ``-`` (or a pipe) from a copy.
FILES = {
    "fit": ({"scores": "the scores file", "labels": "the labels file", "hierarchy": "the hierarchy file",
             "holdout": "a --holdout file"}, {"output": "-o"}),
    "predict": ({"model": "the model file", "scores": "the scores file"}, {"output": "-o", "decisions": "--decisions"}),
    "rank": ({"values": "the values file", "hierarchy": "the hierarchy or model file"}, {"output": "-o"}),
    "benchmark": ({"files": "an ARFF file"}, {"json": "--json"}),
    "evaluate": ({"ontology": "the ontology file", "predictions": "the predictions", "ground_truth":
                  "the ground truth file", "ia": "the --ia file"}, {"json": "--json"}),
    "check-inference": ({"hierarchy": "the hierarchy file", "model": "the --model file", "scores":
                         "the --scores file"}, {"json": "--json"}),
}


class Steps:
    """A progress bar over named steps (tqdm on stderr; off with --quiet or when not a terminal); ``total`` None
    when the number of steps is not known ahead."""

    def __init__(self, args, total, desc, unit="it"):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc=desc, unit=unit, disable=True if args.quiet else None, leave=False,
                        file=sys.stderr)

    def step(self, what, n=1):
        self.bar.set_postfix_str(what, refresh=False)
        self.bar.update(n)

    def clear(self):
        """Take the bar off its line, so that what is printed next starts on a clean line (the next step redraws
        it)."""
        self.bar.clear()

    def close(self):
        self.bar.close()


def _scale_requested(args, *paths):
    """Whether a command goes through hmcpgm.scale: --chunk-size, or a Parquet file."""
    from ..io import PARQUET

    if args.scheduler and args.chunk_size is None:
        raise UserError("--scheduler needs --chunk-size: the objects go to the workers in chunks of that many")
    return args.chunk_size is not None or any(p and Path(p).suffix.lower() in PARQUET for p in paths)


def _inference_options(args):
    opts = {}
    if args.budget_gb is not None:
        opts["budget_bytes"] = int(args.budget_gb * 2**30)
    if args.max_clique is not None:
        opts["max_clique"] = args.max_clique
    if args.damping is not None:
        opts["damping"] = args.damping
    if args.max_iter is not None:
        opts["max_iter"] = args.max_iter
    return opts


def command_demo(args):
    from .._atomic import check_distinct
    from ..applications.paper import TABLES, format_tables, synthetic_experiment
    from ..io import check_output

    if args.csv:  # every table's file checked before the run, which takes a while
        folder = Path(args.csv)
        if folder.exists() and not folder.is_dir():
            raise UserError(f"--csv {args.csv!r} is a file; give a folder for the tables")
        if folder.is_dir():
            for name in TABLES:
                check_output(folder / f"{name}.csv", "--csv")
            check_distinct({}, {f"--csv's {name}.csv": folder / f"{name}.csv" for name in TABLES})  # no link
        else:  # made with its parents, as example makes its folder
            made_in = next(p for p in folder.absolute().parents if p.exists())
            if not made_in.is_dir():
                raise UserError(f"--csv {args.csv!r}: {str(made_in)!r} is a file, so the folder cannot be made")
    result = synthetic_experiment(n_train=args.n_train, n_test=args.n_test, seed=args.seed, progress=not args.quiet)
    print(format_tables(result))
    if args.csv:
        for path in result.to_csv(args.csv):
            print(f"wrote {path}")


def command_example(args):
    from .._atomic import atomic_writes
    from ..datasets import make_paper_synthetic
    from ..io import write_hierarchy, write_matrix

    folder = Path(args.dir)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"DIR {args.dir!r} is a file; give a folder")
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)  # an unwritable place is refused before the data are drawn
    names = ("hierarchy.csv", "train_scores.csv", "train_labels.csv", "new_scores.csv", "new_labels.csv")
    try:  # the five files replaced together: a stop or a full disk leaves the folder as it was
        with atomic_writes([folder / name for name in names]) as files:
            data = make_paper_synthetic(n_train=args.n_train, n_test=args.n_new, seed=args.seed)
            h = data.hierarchy
            write_hierarchy(h, files[0])
            for fh, matrix in zip(files[1:], (data.train_scores, data.train_labels, data.test_scores,
                                              data.test_labels)):
                write_matrix(fh, matrix, h)
    except BaseException:
        if made:  # the folder this run made, empty again (its parents, if it made them, stay)
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    print(f"wrote hierarchy.csv, train_scores.csv, train_labels.csv ({args.n_train} objects), new_scores.csv "
          f"and new_labels.csv ({args.n_new} objects) of {h.n_classes} classes into {folder}")


def command_fit(args):
    import numpy as np

    from ..estimator import MLPR
    from ..io import check_output
    from ..persist import save_model
    from ._go import hierarchy_argument

    check_output(args.output, "-o")
    steps = Steps(args, 4, "fit")
    hierarchy, ontology = hierarchy_argument(args.hierarchy, args, args.scores)
    ids, scores, labels = _scored_rows(args.scores, args.labels, hierarchy, ontology, args)
    holdout = None
    if args.holdout is not None:
        _not_the_training_file(args.holdout[0], args.scores)
        held_ids, *holdout = _scored_rows(*args.holdout, hierarchy, ontology, args)
        _not_trained_on(held_ids, ids)
    steps.step("read")
    model = MLPR(
        hierarchy=hierarchy, version=args.mlpr_version or "auto", score_model=args.score_model,
        tempering=None if args.tempering == "none" else args.tempering, recalibrate=not args.no_recalibrate,
        consistency=args.consistency, pool=args.pool, stack=args.stack, prior=args.prior,
        engine=args.engine or "auto", close_labels=args.close_labels, allow_empty=args.allow_empty,
        pseudo_count=args.pseudo_count, inference_options=_inference_options(args) or None,
        verbose=not args.quiet,  # a progress bar over the cross-fitting's steps (on a terminal)
    ).fit(scores, labels)
    if holdout is not None:  # the final model's own mLPRs on rows it did not see: more powerful FDR cutoffs
        model.fit_recalibration(*holdout)
    steps.step("fitted", 2)
    save_model(model, args.output)
    steps.step("saved")
    steps.close()
    chosen = f"version {model.version_}"
    if model.cv_results_ is not None:
        chosen += f" (evidence exponent {'/'.join(f'{a:.2f}' for a in np.unique(model.tempering_))})"
    if model.prior_ == "prevalence" and model.version_ != "indpt":
        chosen += " under the training prevalence's prior"
    if model.consistency_ == "max":
        chosen += " with the max constraint"
    elif model.consistency_ != "hierrank":
        chosen += f" corrected by {model.consistency_}"
    if model.pool_weight_ < 1:
        chosen += f", averaged with the isotonic posteriors at weight {model.pool_weight_:.2f}"
    if model.stack_weight_ > 0:
        chosen += f", with the neighbour stack at weight {model.stack_weight_:.2f}"
    if holdout is not None:
        chosen += f"; recalibrated on {len(holdout[0])} held-out objects"
    print(f"fitted on {len(scores)} objects x {hierarchy.n_classes} classes, {chosen}; saved {args.output}")


def _not_the_training_file(held_out, training):
    """Refuse ``--holdout`` scores that are the training scores file: the map would be fitted on trained rows."""
    if os.path.isfile(held_out) and os.path.isfile(training) and os.path.samefile(held_out, training):
        raise UserError(f"--holdout: the scores file {held_out} is the training scores file; held-out rows must "
                        "be objects the model is not fitted on")


def _not_trained_on(held_ids, ids):
    """Refuse ``--holdout`` objects whose ids are training objects (with --id-column)."""
    import numpy as np

    if held_ids is None or ids is None:
        return
    both = np.isin(held_ids, ids)
    if both.any():
        raise UserError(f"--holdout: {int(both.sum())} of its objects are training objects (first: "
                        f"{held_ids[np.argmax(both)]!r}); held-out rows must be objects the model is not fitted on")


def _scored_rows(scores_path, labels_path, hierarchy, ontology, args):
    """Ids (or None), scores and 0/1 labels of the same objects (paired by id with --id-column, else by position)."""
    from ..io import align_by_id, read_matrix
    from ..ontology import is_annotation_file
    from ._go import annotation_labels

    ids, scores = read_matrix(scores_path, hierarchy, "scores", id_column=args.id_column)
    if is_annotation_file(labels_path, hierarchy.classes, args.id_column):  # gene-term pairs, closed upward
        label_ids, labels = annotation_labels(labels_path, hierarchy, ontology, ids, args)
    else:
        if args.evidence is not None:
            raise UserError(f"--evidence keeps GAF lines of some evidence codes, but {labels_path} is a label matrix, "
                            "not gene-term annotations: leave out --evidence")
        label_ids, labels = read_matrix(labels_path, hierarchy, "labels", id_column=args.id_column, binary=True)
    if ids is not None:
        labels = labels[align_by_id(label_ids, ids, "labels file", "scores file")]
    elif len(scores) != len(labels):
        raise UserError(
            f"scores has {len(scores)} rows but labels has {len(labels)} ({scores_path}, {labels_path}); rows are "
            "paired by position (pass --id-column to pair them by id)"
        )
    if not args.close_labels:
        where = (
            (lambda r: f"row {r + 1} (line {r + 2})") if ids is None else (lambda r: f"the object with id {ids[r]!r}")
        )
        hierarchy.check_labels(labels, f"the labels of {labels_path}", where=where)
    return ids, scores, labels


def command_predict(args):
    from ..io import check_output
    from ..persist import load_model
    from ..scale import DEFAULT_CHUNK_SIZE, predict_files

    check_output(args.output, "-o")
    if args.decisions:
        check_output(args.decisions, "--decisions")
    _scale_requested(args, args.scores, args.output, args.decisions)  # refuses --scheduler without --chunk-size
    model = load_model(args.model)
    if args.mlpr_version:
        # the estimator's own rule: "auto" or the fitted version, or any version of the paper's model
        model.set_params(version=args.mlpr_version)
        from ..exceptions import InputError

        try:
            model.version_in_use()
        except InputError:
            raise UserError(
                f"--mlpr-version {args.mlpr_version}: the model in {args.model} was fitted for version "
                f"{model.version_} (its evidence exponents and recalibration were cross-fitted for it); "
                f"refit it with 'hmcpgm fit --mlpr-version {args.mlpr_version}'"
            ) from None
    if args.engine:
        model.set_params(engine=args.engine)
    if _inference_options(args):
        model.set_params(inference_options={**(model.inference_options or {}), **_inference_options(args)})
    if args.threshold is not None:
        model.set_params(threshold=args.threshold)
    # one path, chunked (a default chunk size bounds memory): one inference per chunk, decisions from its mLPRs
    n, positives = predict_files(model, args.scores, args.output, decisions=args.decisions,
                                 id_column=args.id_column, chunk_size=args.chunk_size or DEFAULT_CHUNK_SIZE,
                                 scheduler=args.scheduler, progress=not args.quiet,
                                 calibrated=not args.uncalibrated,  # what 'rank --fdr' needs, unless asked otherwise
                                 cafa=args.format == "cafa")
    _predicted(model, args, n, positives)


def _predicted(model, args, n, positives):
    engine, exact = model.engine_in_use()
    version = model.version_in_use()
    how = f"{version} version" if engine == "indpt" else \
        f"{version} version, {engine} engine, {'exact' if exact else 'approximate'}"
    recalibrated = not args.uncalibrated and model.recalibration_ is not None
    what = "recalibrated mLPRs" if recalibrated else "mLPRs"
    print(f"wrote {what} of {n} objects ({how}) to {args.output}")
    if args.decisions:
        print(f"wrote {positives} positive decisions (recalibrated block mean >= {model.threshold}) to {args.decisions}"
              if model.recalibration_ is not None else
              f"wrote {positives} positive decisions (block mean >= {model.threshold}) to {args.decisions}")


def _load_hierarchy_or_model(path, args, matrix_path):
    from ..persist import is_model_file, load_model
    from ._go import hierarchy_argument

    if is_model_file(path):
        return load_model(path).hierarchy_, None
    return hierarchy_argument(path, args, matrix_path)


def command_rank(args):
    import numpy as np

    from .._atomic import atomic_write
    from .._csvwrite import write_csv
    from ..decision import bayes_cutoff
    from ..io import check_output, read_matrix
    from ..ranking import Ranking, hier_rank, naive_sort
    from ..ranking._ranking import id_column_name
    from ._go import with_term_names

    check_output(args.output, "-o")
    at_scale = _scale_requested(args, args.values, args.output)
    hierarchy, ontology = _load_hierarchy_or_model(args.hierarchy, args, args.values)
    if at_scale:
        from ..scale import rank_files

        n, cut = rank_files(args.values, hierarchy, args.output, fdr=args.fdr, method=args.method,
                            id_column=args.id_column, chunk_size=args.chunk_size, scheduler=args.scheduler,
                            progress=not args.quiet, names=(ontology.names or None) if ontology is not None else None)
        if cut is not None:
            print(f"{cut.rank} of {n} events called positive at estimated FDR <= {args.fdr}")
        print(f"wrote the ranking of {n} events to {args.output}")
        return
    object_column = id_column_name(args.id_column, names=ontology is not None and bool(ontology.names))
    steps = Steps(args, 3, "rank")
    ids, values = read_matrix(args.values, hierarchy, "values", id_column=args.id_column)
    if args.fdr is not None and values.size and (values.min() < 0 or values.max() > 1):
        raise UserError(f"--fdr needs values that are probabilities (mLPRs in [0, 1]); {args.values} holds values "
                         f"from {float(values.min())!r} to {float(values.max())!r}")
    steps.step("read")
    ranked = (hier_rank if args.method == "hierrank" else naive_sort)(values, hierarchy)
    index = ids if ids is not None else np.arange(1, len(values) + 1)
    ranked = Ranking(ranked.order, ranked.n_objects, hierarchy.classes, block_means=ranked.block_means,
                     method=ranked.method, index=index)
    steps.step("ranked")
    table = ranked.to_frame(values).rename(columns={"object": object_column})
    table = with_term_names(table, ontology)
    if args.fdr is not None:
        cut = bayes_cutoff(ranked, values, rule="fdr", alpha=args.fdr)
        table["positive"] = (table["rank"] <= cut.rank).astype(int)
        print(f"{cut.rank} of {len(table)} events called positive at estimated FDR <= {args.fdr}")
    with atomic_write(args.output) as fh:
        write_csv(table, fh)  # DataFrame.to_csv's bytes
    steps.step("written")
    steps.close()
    print(f"wrote the ranking of {len(table)} events to {args.output}")


def command_benchmark(args):
    import json

    from .._atomic import atomic_write
    from ..applications.clus import format_benchmark, run_benchmark
    from ..io import check_output

    if len(args.files) not in (2, 3):
        raise UserError(f"benchmark takes TRAIN [VALID] TEST: two or three ARFF files, got {len(args.files)}")
    if args.json:
        check_output(args.json, "--json")
    train, *middle, test = args.files
    result = run_benchmark(
        train, test, middle[0] if middle else None, first_stage=args.first_stage,
        valid_fraction=args.valid_fraction, seed=args.seed, progress=not args.quiet,
    )
    if args.json:  # first: minutes of work stay on disk whatever the printing does
        with atomic_write(args.json) as fh:
            fh.write(json.dumps(result, indent=2))
    print(format_benchmark(result))
    if args.json:
        print(f"wrote {args.json}")
