"""Training the face classifier and the dice locator (optional extra `train`: torch CPU)."""
