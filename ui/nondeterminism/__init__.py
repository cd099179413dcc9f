"""The "Temperature 0 & batching" tab: one prompt alone and in bigger batches, token by token (layout, handlers)."""
