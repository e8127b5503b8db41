"""`python -m empathybench.schema`: regenerate the checked-in JSON schema files from the pydantic models."""

from empathybench.schema.files import write_schema_files

if __name__ == "__main__":
    for path in write_schema_files():
        print(path)
