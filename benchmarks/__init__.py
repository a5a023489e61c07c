"""Benchmarks of the course: ``python -m benchmarks`` (``make bench``) writes ``benchmarks/RESULTS.md`` and
``benchmarks/results.png``; no test asserts a timing.

One module per section, each with ``NAME``, ``TITLE``, ``run(cfg, res, log)`` (measure, into the shared
:class:`~benchmarks.common.Results`) and ``lines(cfg, res)`` (its part of RESULTS.md); :mod:`.report` is the
one writer of the file. The sections, in the order of the report (``__main__.SECTIONS``):

=================  ==========================================================================================
module             measures
=================  ==========================================================================================
``lessons``        each lesson executed cold in a fresh kernel, and its kernel's peak memory (``memory``)
``attention``      attention forward on CPU: our NumPy function and layer against PyTorch's
``blockwise``      full against block-wise (online-softmax) attention: time and peak memory against T
``grading``        the cost of grading a submission sealed off (bubblewrap) against not isolated
``class_grading``  sealed submissions graded per minute with JOBS = 1 and 2: how long a class takes
``hub_load``       a class on a JupyterHub at once: page loads while loaded, kernels, memory per learner
``widgets``        widget redraw latency in JupyterLab and in its live slideshow (Chromium, via ``labdriver``)
``testloop``       ``make check`` and ``make test``, timed (``--full`` only)
=================  ==========================================================================================

A new section is a module with those four names, added to ``SECTIONS``. ``benchmarks/README.md`` says how to
read the figures.
"""
