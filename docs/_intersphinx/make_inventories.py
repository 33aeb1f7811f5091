"""Write the intersphinx inventories shipped in docs/_intersphinx/.

Why: ``docs/conf.py`` links to scikit-learn, NumPy, Dask and Python through
intersphinx.
It first asks each project's site for its ``objects.inv``; where the network
does not allow that (the build machine of this repository reaches package
registries only), it falls back to the files written here, so that the build
neither fails nor loses its cross-links offline.

What: a subset inventory per project, made by introspecting the installed
package and mapping each public object to the page its documentation gives it
(the URL layouts of the projects' API references, as of scikit-learn 1.6+,
NumPy 2 and Dask 2024+):

* scikit-learn: every class and function in the ``__all__`` of every public
  submodule, at ``modules/generated/<name>.html#<name>``, with the public
  methods of the classes; the submodules at ``api/<module>.html``; and the
  glossary terms the docstrings here use;
* NumPy: the functions and ufuncs of ``numpy`` and ``numpy.linalg`` at
  ``reference/generated/<name>.html``, and a hand-checked list of classes,
  scalar types, random-generator pages and glossary terms;
* Python: the builtins, constants and glossary terms numpydoc links parameter
  types to;
* Dask: a hand-checked list (``dask.array.Array`` and its methods, the array
  constructors and ``dask.compute`` / ``dask.persist`` / ``dask.delayed``).

Regenerate after a major release of one of them with
``python docs/_intersphinx/make_inventories.py`` (needs scikit-learn, NumPy
and Dask installed).  The real inventories, when reachable, always win.
"""

import importlib
import inspect
import os
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def _write(path, project, version, entries):
    """Write an intersphinx v2 inventory: ``(name, domain:role, uri, dispname)``."""
    seen = set()
    lines = []
    for name, role, uri, disp in sorted(entries):
        if (name, role) in seen:
            continue
        seen.add((name, role))
        if uri.endswith("#" + name):
            uri = uri[: -len(name)] + "$"
        lines.append(f"{name} {role} 1 {uri} {disp or '-'}\n")
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    with open(path, "wb") as f:
        f.write(header.encode("utf-8"))
        f.write(zlib.compress("".join(lines).encode("utf-8"), 9))
    print(f"wrote {path} ({len(lines)} entries)")


def _public_methods(cls):
    for attr, value in vars(cls).items():
        if attr.startswith("_"):
            continue
        if inspect.isfunction(value) or isinstance(value, (classmethod, staticmethod)):
            yield attr, "py:method"
        elif isinstance(value, property):
            yield attr, "py:property"


def sklearn_entries():
    import sklearn

    entries = []
    gen = "modules/generated/{0}.html#{0}"
    for name in sklearn.__all__:
        full = f"sklearn.{name}"
        try:
            obj = importlib.import_module(full)
        except ImportError:
            obj = getattr(sklearn, name, None)
            if callable(obj):
                entries.append((full, "py:function", gen.format(full), "-"))
            continue
        entries.append((full, "py:module", f"api/{full}.html#module-{full}", "-"))
        for member in getattr(obj, "__all__", []):
            try:
                value = getattr(obj, member, None)
            except ImportError:  # experimental (needs sklearn.experimental.enable_*)
                continue
            qual = f"{full}.{member}"
            if inspect.isclass(value):
                role = "py:exception" if issubclass(value, BaseException) else "py:class"
                entries.append((qual, role, gen.format(qual), "-"))
                for meth, mrole in _public_methods(value):
                    entries.append((f"{qual}.{meth}", mrole,
                                    f"modules/generated/{qual}.html#{qual}.{meth}", "-"))
            elif callable(value):
                entries.append((qual, "py:function", gen.format(qual), "-"))
    entries.append(("sklearn", "py:module", "api/index.html#module-sklearn", "-"))
    for term in ["estimator", "clustering", "cross-validation", "fit", "predict",
                 "transform", "score", "random_state", "n_jobs", "pipeline",
                 "hyperparameter", "array-like", "sample", "feature", "clone",
                 "warm_start", "partial_fit", "inductive", "transductive"]:
        entries.append((term, "std:term", f"glossary.html#term-{term}", term))
    entries.append(("glossary", "std:doc", "glossary.html", "Glossary of Common Terms"))
    entries.append(("user_guide", "std:doc", "user_guide.html", "User Guide"))
    return sklearn.__version__, entries


def numpy_entries():
    import numpy as np

    entries = []
    gen = "reference/generated/{0}.html#{0}"
    for modname, mod in [("numpy", np), ("numpy.linalg", np.linalg)]:
        for name in getattr(mod, "__all__", dir(mod)):
            if name.startswith("_"):
                continue
            value = getattr(mod, name, None)
            qual = f"{modname}.{name}"
            if isinstance(value, np.ufunc):  # NumPy documents its ufuncs as data
                entries.append((qual, "py:data", gen.format(qual), "-"))
            elif callable(value) and not inspect.isclass(value):
                entries.append((qual, "py:function", gen.format(qual), "-"))
    entries += [
        ("numpy", "py:module", "reference/index.html#module-numpy", "-"),
        ("numpy.ndarray", "py:class", gen.format("numpy.ndarray"), "-"),
        ("numpy.dtype", "py:class", gen.format("numpy.dtype"), "-"),
        ("numpy.ufunc", "py:class", gen.format("numpy.ufunc"), "-"),
        ("numpy.float32", "py:class", "reference/arrays.scalars.html#numpy.float32", "-"),
        ("numpy.float64", "py:class", "reference/arrays.scalars.html#numpy.float64", "-"),
        ("numpy.int64", "py:class", "reference/arrays.scalars.html#numpy.int64", "-"),
        ("numpy.intp", "py:attribute", "reference/arrays.scalars.html#numpy.intp", "-"),
        ("numpy.random", "py:module", "reference/random/index.html#module-numpy.random", "-"),
        ("numpy.random.Generator", "py:class",
         "reference/random/generator.html#numpy.random.Generator", "-"),
        ("numpy.random.default_rng", "py:function",
         "reference/random/generator.html#numpy.random.default_rng", "-"),
        ("numpy.random.RandomState", "py:class",
         "reference/random/legacy.html#numpy.random.RandomState", "-"),
        ("numpy.linalg", "py:module", "reference/routines.linalg.html#module-numpy.linalg",
         "-"),
        ("array_like", "std:term", "glossary.html#term-array_like", "array_like"),
        ("array", "std:term", "glossary.html#term-array", "array"),
        ("ndarray", "std:term", "glossary.html#term-ndarray", "ndarray"),
        ("arrays.scalars", "std:label", "reference/arrays.scalars.html#arrays-scalars",
         "Scalars"),
        ("numpy.inf", "py:data", "reference/constants.html#numpy.inf", "-"),
        ("numpy.nan", "py:data", "reference/constants.html#numpy.nan", "-"),
    ]
    return np.__version__, entries


def dask_entries():
    import dask
    import dask.array as da

    gen = "generated/{0}.html#{0}"
    entries = [
        ("dask", "py:module", "api.html#module-dask", "-"),
        ("dask.array", "py:module", "array-api.html#module-dask.array", "-"),
        ("dask.array.Array", "py:class", gen.format("dask.array.Array"), "-"),
        ("dask.compute", "py:function", "api.html#dask.compute", "-"),
        ("dask.persist", "py:function", "api.html#dask.persist", "-"),
        ("dask.delayed", "py:function", "delayed-api.html#dask.delayed.delayed", "-"),
    ]
    for meth in ["compute", "persist", "rechunk", "map_blocks", "sum", "mean", "dot",
                 "astype", "to_delayed"]:
        if hasattr(da.Array, meth):
            entries.append((f"dask.array.Array.{meth}", "py:method",
                            f"generated/dask.array.Array.{meth}.html#dask.array.Array.{meth}",
                            "-"))
    for func in ["from_array", "asarray", "zeros", "ones", "empty", "concatenate",
                 "stack", "map_blocks", "blockwise", "einsum", "dot", "argmin",
                 "argmax", "bincount"]:
        if hasattr(da, func):
            entries.append((f"dask.array.{func}", "py:function",
                            gen.format(f"dask.array.{func}"), "-"))
    return dask.__version__, entries


def python_entries():
    """The builtins numpydoc links parameter types to (its ``DEFAULT_LINKS``)."""
    import sys

    entries = [
        ("None", "py:data", "library/constants.html#None", "-"),
        ("True", "py:data", "library/constants.html#True", "-"),
        ("False", "py:data", "library/constants.html#False", "-"),
        ("bltin-boolean-values", "std:label", "library/stdtypes.html#bltin-boolean-values",
         "Boolean Type - bool"),
        ("contextlib.contextmanager", "py:function",
         "library/contextlib.html#contextlib.contextmanager", "-"),
        ("collections.namedtuple", "py:function",
         "library/collections.html#collections.namedtuple", "-"),
    ]
    for name in ["list", "tuple", "str", "dict", "set", "frozenset", "bytes", "range"]:
        entries.append((name, "py:class", f"library/stdtypes.html#{name}", "-"))
    for name in ["float", "int", "bool", "complex", "object", "type", "slice"]:
        entries.append((name, "py:class", f"library/functions.html#{name}", "-"))
    for name in ["callable", "isinstance", "len", "print", "range", "repr", "sorted"]:
        entries.append((name, "py:function", f"library/functions.html#{name}", "-"))
    for term in ["iterable", "sequence", "generator", "mapping", "iterator"]:
        entries.append((term, "std:term", f"glossary.html#term-{term}", term))
    return f"{sys.version_info.major}.{sys.version_info.minor}", entries


def main():
    for fname, project, make in [("sklearn-objects.inv", "scikit-learn", sklearn_entries),
                                 ("numpy-objects.inv", "NumPy", numpy_entries),
                                 ("dask-objects.inv", "Dask", dask_entries),
                                 ("python-objects.inv", "Python", python_entries)]:
        version, entries = make()
        _write(os.path.join(HERE, fname), project, version, entries)


if __name__ == "__main__":
    main()
