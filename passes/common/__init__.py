"""What every stage of the pipeline shares: the IR forms and the input check of every pass, copying ops, symbolic index
arithmetic."""
