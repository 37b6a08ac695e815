func showEditControls() {}
