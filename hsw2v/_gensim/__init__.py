"""The gensim bridge below the models: ``convert`` (arrays and settings to and from gensim's
classes), ``files`` (what gensim's pickles and ``save()`` options mean for hsw2v's files) and
``names`` (gensim 3's attribute names, answered with their gensim 4 replacement).

The models import these; the public face over them is :mod:`hsw2v.gensim_compat`, which
imports the models, so it stays outside this package (importing a module of this package
must never import a model).
"""
