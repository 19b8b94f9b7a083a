from reviewer.cli import script

if __name__ == "__main__":  # importing this module (a web route naming it, say) runs nothing
    script()
