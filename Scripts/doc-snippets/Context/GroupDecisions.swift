func showSeatControls() {}
