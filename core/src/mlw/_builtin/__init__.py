"""The core's internal plugins: loaders, metrics and thresholding strategies, registered
through the same hooks as any third-party plugin (see ``mlw.plugins.DEFAULT_PLUGINS``)."""
